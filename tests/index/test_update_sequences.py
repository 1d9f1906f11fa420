"""An incremental `update` after ANY sequence of changes leaves exactly the rows a rebuild from scratch
would: hypothesis draws sequences of writes, `git mv` renames, committed edits, dirty edits, reverts,
deletions and untracked files; after every step the index that followed the whole sequence, one
`update` per step, is compared with a fresh rebuild of the same store.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from memhtml.index.database import open_database
from memhtml.index.indexer import update
from memhtml.operations.init import init
from memhtml.operations.write import WriteRequest, write
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git
from tests.index.test_indexer import NOW, rebuilt_snapshot, snapshot

WORDS = ("pool", "ceiling", "retry", "budget", "deploy", "key", "cache", "ttl", "quokka", "ledger")


class IndexFollowsGit(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.scratch = Path(tempfile.mkdtemp(prefix="memhtml-sequences-"))
        self.root = self.scratch / "store"
        init(self.root)
        self.committed: list[str] = []  # memory paths at HEAD
        self.dirty: set[str] = set()  # committed paths edited but not committed
        self.untracked: list[str] = []
        self.serial = 0
        self.steps_since_check = 0

    def teardown(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _next_serial(self) -> int:
        self.serial += 1
        self.steps_since_check += 1
        return self.serial

    def _clean_committed(self) -> list[str]:
        return [path for path in self.committed if path not in self.dirty]

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    def write_memory(self, words: list[str]) -> None:
        serial = self._next_serial()
        request = WriteRequest(
            title=f"Fact {serial}",
            memory_type="semantic",
            claim=f"The {' '.join(words)} value number {serial} is {serial * 3}.",
        )
        answer = write(self.root, request, now=dt.datetime(2026, 11, 30, 6, serial % 60, tzinfo=dt.UTC))
        data = answer.as_data()
        assert data["stored"] is True
        self.committed.append(str(data["path"]))

    @precondition(lambda self: any(path not in self.dirty for path in self.committed))
    @rule(choice=st.integers(min_value=0))
    def rename(self, choice: int) -> None:
        candidates = self._clean_committed()
        source = candidates[choice % len(candidates)]
        target = source.removesuffix(".html") + f"-moved-{self._next_serial()}.html"
        git(self.root, "mv", source, target)
        git(self.root, "commit", "-q", "-m", "move")
        self.committed[self.committed.index(source)] = target

    @precondition(lambda self: any(path not in self.dirty for path in self.committed))
    @rule(choice=st.integers(min_value=0), word=st.sampled_from(WORDS))
    def edit_and_commit(self, choice: int, word: str) -> None:
        candidates = self._clean_committed()
        path = candidates[choice % len(candidates)]
        self._edit(path, f"{word} {self._next_serial()}")
        git(self.root, "commit", "-q", "-m", "edit", "--", path)  # only this path: other dirty edits stay dirty

    @precondition(lambda self: any(path not in self.dirty for path in self.committed))
    @rule(choice=st.integers(min_value=0), word=st.sampled_from(WORDS))
    def dirty_edit(self, choice: int, word: str) -> None:
        candidates = self._clean_committed()
        path = candidates[choice % len(candidates)]
        self._edit(path, f"{word} dirty {self._next_serial()}")
        self.dirty.add(path)

    @precondition(lambda self: bool(self.dirty))
    @rule(choice=st.integers(min_value=0))
    def revert(self, choice: int) -> None:
        path = sorted(self.dirty)[choice % len(self.dirty)]
        git(self.root, "checkout", "--", path)
        self.dirty.discard(path)
        self._next_serial()

    @precondition(lambda self: any(path not in self.dirty for path in self.committed))
    @rule(choice=st.integers(min_value=0))
    def delete(self, choice: int) -> None:
        candidates = self._clean_committed()
        path = candidates[choice % len(candidates)]
        git(self.root, "rm", "-q", path)
        git(self.root, "commit", "-q", "-m", "delete")
        self.committed.remove(path)
        self._next_serial()

    @precondition(lambda self: bool(self.committed))
    @rule(choice=st.integers(min_value=0))
    def untracked_copy(self, choice: int) -> None:
        source = self.committed[choice % len(self.committed)]
        serial = self._next_serial()
        target = f"areas/inbox/untracked-{serial}.html"
        text = (self.root / source).read_text(encoding="utf-8")
        (self.root / target).write_text(text.replace("</mark>", f" untracked {serial}</mark>", 1), encoding="utf-8")
        self.untracked.append(target)

    @precondition(lambda self: any(path not in self.dirty for path in self.committed))
    @rule(choice=st.integers(min_value=0), before=st.booleans(), commit=st.booleans())
    def exact_copy(self, choice: int, before: bool, commit: bool) -> None:
        """A byte-for-byte copy of a memory, at a path sorting before or after every written one: the
        index holds one copy of an article, the same one whichever order the copies arrived in."""
        candidates = self._clean_committed()
        source = candidates[choice % len(candidates)]
        serial = self._next_serial()
        target = f"areas/0-copy-{serial}.html" if before else f"resources/zz-copy-{serial}.html"
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.root / source, self.root / target)
        if commit:
            git(self.root, "add", "--", target)
            git(self.root, "commit", "-q", "-m", "copy", "--", target)
            self.committed.append(target)
        else:
            self.untracked.append(target)

    @precondition(lambda self: bool(self.untracked))
    @rule(choice=st.integers(min_value=0))
    def remove_untracked(self, choice: int) -> None:
        path = self.untracked.pop(choice % len(self.untracked))
        (self.root / path).unlink()
        self._next_serial()

    @invariant()
    def update_and_compare_with_a_rebuild(self) -> None:
        if self.steps_since_check == 0:
            return
        reader = GitCorpusReader(self.root)
        reader.prefetch_dirty()  # as `index update` reads the working tree
        with open_database(self.root) as database:
            update(database, reader, NOW)
        assert snapshot(self.root) == rebuilt_snapshot(self.root, self.scratch)
        self.steps_since_check = 0

    @invariant()
    def the_model_matches_git(self) -> None:
        listed = {line for line in git(self.root, "ls-files", "--", "projects", "areas", "resources").split("\n")}
        assert set(self.committed) <= listed
        modified = {line for line in git(self.root, "diff", "--name-only").split("\n") if line}
        assert modified == self.dirty

    def _edit(self, path: str, addition: str) -> None:
        file = self.root / path
        text = file.read_text(encoding="utf-8")
        assert "</mark>" in text
        file.write_text(text.replace("</mark>", f" {addition}</mark>", 1), encoding="utf-8")


def test_update_equals_rebuild_after_any_sequence_of_changes() -> None:
    run_state_machine_as_test(
        IndexFollowsGit,
        settings=settings(
            max_examples=8,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
