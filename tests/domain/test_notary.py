"""The safety notary's scans: every secret kind found (and nothing else), the entropy threshold on both
sides, invisible and control characters, look-alikes seen through NFKC, dangerous URLs and markup.

Secret-shaped values are assembled from pieces, so this file holds no literal credential a scanner
would report.
"""

from __future__ import annotations

import random
import string
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.notary import (
    FILLERS,
    FORMAT_RANGES,
    MIN_VALUE_ENTROPY,
    MIN_VALUE_LENGTH,
    Finding,
    character_classes,
    cleaned,
    control_findings,
    dangerous_scheme,
    invisible_findings,
    looks_random,
    markup_violations,
    plainly_clear,
    secret_findings,
    shannon_entropy,
    shown,
)

GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiJ9"
    + ".eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0"
    + "."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nAbCdEf==\n-----END RSA PRIVATE KEY-----"

# (kind, text, the secret inside it)
SECRETS = [
    ("aws-access-key-id", "key id AKIA" + "IOSFODNN7EXAMPLE" + " in eu-west-1", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("aws-access-key-id", "session ASIA" + "Y34FZKBOKMUTVV7A.", "ASIA" + "Y34FZKBOKMUTVV7A"),
    (
        "aws-secret-access-key",
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
    ),
    (
        "aws-secret-access-key",
        'AWS_SECRET_ACCESS_KEY: "' + "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAxMjM0" + '"',
        "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAxMjM0",
    ),
    ("github-token", f"use {GITHUB} for the CI", GITHUB),
    ("github-token", f"git clone https://{GITHUB}@github.com/org/repo.git", GITHUB),
    *[
        ("github-token", f"a {prefix} token: {prefix}_" + "Zz9" * 12 + ".", f"{prefix}_" + "Zz9" * 12)
        for prefix in ("gho", "ghu", "ghs", "ghr")
    ],
    ("github-token", "github_pat_" + "11ABCDEFG0" + "_" + "x7Y" * 20, "github_pat_" + "11ABCDEFG0" + "_" + "x7Y" * 20),
    ("gitlab-token", "GitLab: glpat-" + "Ab3dEf6hIj9kLm2nOp5q", "glpat-" + "Ab3dEf6hIj9kLm2nOp5q"),
    (
        "slack-token",
        "bot xoxb-" + "1234567890-0987654321-" + "AbCdEfGhIj",
        "xoxb-" + "1234567890-0987654321-" + "AbCdEfGhIj",
    ),
    ("slack-token", "user xoxp-" + "9876543210-ZyXwVuTsRq", "xoxp-" + "9876543210-ZyXwVuTsRq"),
    (
        "slack-webhook",
        "alerts go to https://hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + "Xy12Zw34Vu56Ts78",
        "hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + "Xy12Zw34Vu56Ts78",
    ),
    ("jwt", f"Authorization header was {JWT}", JWT),
    ("private-key", f"<pre><code>{PEM}</code></pre>", PEM),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA", None),
    ("private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", None),
    (
        "google-api-key",
        "maps key AIza" + "SyD-9tSrke72PouQMnMX" + "-a7eZSW0jkFMBWY.",
        "AIza" + "SyD-9tSrke72PouQMnMX" + "-a7eZSW0jkFMBWY",
    ),
    ("stripe-key", "charge with sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe-key", "restricted rk_live_" + "51H8abcdEFGH1234ijkl", "rk_live_" + "51H8abcdEFGH1234ijkl"),
    ("secret-value", "password=" + "Summer2024!", "Summer2024!"),
    ("secret-value", 'DB_PASSWORD="' + "Xk29fL0qPz7Rw" + '"', "Xk29fL0qPz7Rw"),
    ("secret-value", '{"apiKey": "' + "9f8e7d6c5b4a39281706f5e4d3c2b1a0" + '"}', "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("secret-value", "client_secret: " + "q8W!e7R@t6Y#u5I$", "q8W!e7R@t6Y#u5I$"),
    ("secret-value", "passwd: " + "Tr0ub4dX&3xyz", "Tr0ub4dX"),  # `&` ends a value, as in a query string
    ("secret-value", "export API_KEY=" + "abcDEF123ghiJKL456.", "abcDEF123ghiJKL456"),
    ("url-password", "postgres://admin:" + "Xk29fL0qPz7Rw" + "@db.internal/app", "Xk29fL0qPz7Rw"),
    ("bearer-token", "curl -H 'Authorization: Bearer " + "abcDEF123456ghiJKL" + "'", "abcDEF123456ghiJKL"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS)
def test_every_secret_kind_is_found_where_it_is(kind: str, text: str, secret: str | None) -> None:
    found = secret_findings(text)
    assert [item.kind for item in found] == [kind]
    start = text.index(secret) if secret is not None else text.index("-----BEGIN")
    assert found[0].start == start
    if secret is not None:
        assert found[0].end == start + len(secret)
    redacted = cleaned(text, found, [])
    assert f"[REDACTED:{kind}]" in redacted
    assert (secret or text[start:]) not in redacted


NOT_SECRETS = [
    # identifiers and digests that are not credentials, our own content hash among them
    "sha256:" + "3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
    '<meta name="memhtml-content-hash" content="sha256:' + "e1" * 32 + '">',
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "md5 d41d8cd98f00b204e9800998ecf8427e of the empty file",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    # credential words with values that are words, placeholders, references or code
    "password=hunter",
    "password=hunter2",
    "password: changeme",
    "the password: Password",
    "token=${GITHUB_TOKEN}",
    "token: $GITHUB_TOKEN",
    "password: %DB_PASSWORD%",
    "api_key: your_api_key_here",
    "SECRET_KEY=REPLACE_ME_IN_PRODUCTION",
    "api_key: Optional[str] = None",
    "token = getAccessToken(user)",
    "password: ********",
    "token: xxxxxxxxxxxxxxxx",
    "max_tokens: 4096 and tokenizer=bert-base-uncased",
    "secretary: JohnSmith1980",
    "postgres://user:password@localhost:5432/app",
    "The secret: keep the batch small.",
    "A bearer token is sent in the Authorization header.",
    # prose that mentions the shapes without carrying one
    "GitHub tokens start with ghp_ and AWS key ids with AKIA.",
    'a JWT starts with eyJ because base64 of {" is eyJ',
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc is a test-mode key",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_realistic_values_that_are_not_secrets_are_left_alone(text: str) -> None:
    assert secret_findings(text) == []


def test_the_entropy_threshold_from_both_sides() -> None:
    # Exactly at the floor: 8 distinct characters (3.0 bits), two classes: a credential.
    assert shannon_entropy("abcdefg1") == pytest.approx(3.0)
    assert secret_findings("password=abcdefg1")[0].kind == "secret-value"
    assert secret_findings("password=admin123")[0].kind == "secret-value"
    # Just under: one repeated character (2.75 bits) with three classes, a documented miss.
    assert shannon_entropy("Passw0rd") == pytest.approx(2.75)
    assert character_classes("Passw0rd") == 3
    assert secret_findings("password=Passw0rd") == []
    # Under the length, whatever the entropy; one class, whatever the entropy.
    assert len("xY3!zQ9") < MIN_VALUE_LENGTH
    assert secret_findings("password=xY3!zQ9") == []
    assert shannon_entropy("supercalifragilistic") > MIN_VALUE_ENTROPY
    assert secret_findings("password=supercalifragilistic") == []
    # `_`, `-` and `.` separate words: they are no class.
    assert character_classes("your_api-key.here") == 1


def test_random_tokens_are_found_and_words_are_not() -> None:
    generator = random.Random(20260101)
    alphabet = string.ascii_letters + string.digits
    for length, floor in ((12, 0.97), (16, 1.0), (24, 1.0), (40, 1.0)):
        tokens = ["".join(generator.choice(alphabet) for _ in range(length)) for _ in range(400)]
        caught = sum(looks_random(token) for token in tokens) / len(tokens)
        assert caught >= floor, (length, caught)
    hex_tokens = ["".join(generator.choice("0123456789abcdef") for _ in range(32)) for _ in range(400)]
    assert all(looks_random(token) for token in hex_tokens)
    words = ["changeme", "password", "placeholder", "undefined", "required", "notasecret", "correcthorsebattery"]
    assert not any(looks_random(word) for word in words)


# Fragments that come close to every cue and pattern, and ordinary words around them.
_PIECES = st.sampled_from(
    ["a", "word", " ", "\n", ":", "=", "_", "-", ".", "/", "@", "://", "gh", "ghp_", "xox", "xoxb-", "AKIA",
     "ASIA", "AIza", "eyJ", "k_live_", "glpat-", "PRIVATE KEY", "-----BEGIN ", "Bearer ", "password", "Token",
     "api_key", "secret", "Zz9", "a1B2c3D4e5", "4eC39HqLyjWDarjtT1zdp7dc", "\u200b", "\u200d", "é", "\x07", "\t"]
)  # fmt: skip


@settings(max_examples=400)
@given(st.lists(_PIECES, max_size=16).map("".join))
def test_the_fast_path_never_skips_a_text_with_a_finding(text: str) -> None:
    if plainly_clear(text):
        assert secret_findings(text) == [] and invisible_findings(text) == [] and control_findings(text) == []


def test_the_fast_path_clears_ordinary_text() -> None:
    assert plainly_clear("The checkout service retries twice.\nservice:checkout-api\nops")
    assert not plainly_clear(f"ok\n{GITHUB}")
    assert not plainly_clear("token: x")  # a cue: screened one text at a time
    assert not plainly_clear("café")


def test_shannon_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)
    assert shannon_entropy("aabb") == pytest.approx(1.0)


def test_look_alikes_are_seen_through_and_spans_map_back_to_the_text() -> None:
    fullwidth = unicodedata.normalize("NFKC", "ｇｈｐ＿") == "ghp_"
    assert fullwidth
    text = "token: ｇｈｐ＿" + GITHUB[4:] + " end"
    found = secret_findings(text)
    assert [item.kind for item in found] == ["github-token"]
    assert text[found[0].start : found[0].end] == "ｇｈｐ＿" + GITHUB[4:]
    split = "x " + GITHUB[:10] + "\u200b" + GITHUB[10:] + " y"
    found = secret_findings(split)
    assert [(item.kind, item.start, item.end) for item in found] == [("github-token", 2, 2 + len(GITHUB) + 1)]
    assert cleaned(split, found, []) == "x [REDACTED:github-token] y"


def test_findings_never_overlap_and_the_longer_kind_wins() -> None:
    found = secret_findings(f"token={JWT} and AKIA" + "IOSFODNN7EXAMPLE")
    assert [item.kind for item in found] == ["jwt", "aws-access-key-id"]
    assert found[0].end <= found[1].start


def test_a_message_shows_at_most_a_public_prefix_and_the_length() -> None:
    github, value = secret_findings(f"{GITHUB} password=Summer2024!")
    assert shown(github) == f"`ghp_…` {len(GITHUB)} characters"
    assert shown(value) == "11 characters"
    assert "Summ" not in shown(value)


# ---------------------------------------------------------------- invisible characters

INVISIBLE = [
    "\u200b",  # zero width space
    "\u200c",  # zero width non-joiner (between ASCII letters)
    "\u200d",  # zero width joiner (between ASCII letters)
    "\u2060",  # word joiner
    "\ufeff",  # BOM inside text
    "\u00ad",  # soft hyphen
    "\u200e",  # left-to-right mark
    *[chr(code) for code in range(0x202A, 0x202F)],  # embeddings and overrides
    *[chr(code) for code in range(0x2066, 0x206A)],  # isolates
    "\U000e0041",  # tag LATIN CAPITAL A (invisible "ASCII smuggling")
    "\u3164",  # Hangul filler
    "\u034f",  # combining grapheme joiner
]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(char):04X}" for char in INVISIBLE])
def test_invisible_and_bidi_characters_are_found_by_code_point(char: str) -> None:
    text = f"pass{char}word"
    found = invisible_findings(text)
    assert [(item.start, item.end) for item in found] == [(4, 5)]
    assert found[0].kind.startswith(f"U+{ord(char):04X}")
    assert cleaned(text, [], found) == "password"


def test_joiners_inside_non_ascii_words_and_emoji_are_text() -> None:
    persian = "می\u200cخواهم"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    heart_on_fire = "\u2764\ufe0f\u200d\U0001f525"
    devanagari = "क्\u200dष"
    for text in (persian, family, heart_on_fire, devanagari, "\u2764\ufe0f"):
        assert invisible_findings(f"ok {text} ok") == [], text
    # a joiner at an ASCII edge, or a run of variation selectors (a hiding channel), is a finding
    assert [item.start for item in invisible_findings("a\u200d\U0001f468")] == [1]
    assert [item.kind[:6] for item in invisible_findings("x\ufe0f\ufe0e\ufe0d")] == ["U+FE0E", "U+FE0D"]


def test_the_format_ranges_cover_every_format_character_python_knows() -> None:
    covered = {code for low, high in FORMAT_RANGES for code in range(low, high + 1)} | set(FILLERS)
    known = {code for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"}
    assert known <= covered


def test_control_characters_and_lone_surrogates() -> None:
    found = control_findings("a\x00b\x07c\x1bd\x7fe\x85f\ud800g\tok\nok\r")
    assert [item.kind for item in found] == [
        "NUL U+0000",
        "control character U+0007",
        "control character U+001B",
        "control character U+007F",
        "control character U+0085",
        "invalid UTF-8 (lone surrogate U+D800)",
    ]
    assert [item.start for item in found] == [1, 3, 5, 7, 9, 11]


def test_cleaning_applies_redactions_and_removals_together() -> None:
    text = "a\u200bb " + GITHUB + " c"
    redactions = secret_findings(text)
    removals = invisible_findings(text)
    assert cleaned(text, redactions, removals) == "ab [REDACTED:github-token] c"
    inside = [Finding("x", 0, 4)]
    assert cleaned("abcdef", inside, [Finding("U+200B", 1, 2)]) == "[REDACTED:x]ef"


# ---------------------------------------------------------------- URLs and markup

DANGEROUS_URLS = [
    ("javascript:alert(1)", "javascript"),
    ("JaVaScRiPt:alert(1)", "javascript"),
    (" \tjava\nscript:alert(1)", "javascript"),
    ("\x01javascript:alert(1)", "javascript"),
    ("&#106;avascript:alert(1)", "javascript"),
    ("&#x6A;avascript&colon;alert(1)", "javascript"),
    ("ｊａｖａｓｃｒｉｐｔ:alert(1)", "javascript"),
    ("java\u200bscript:alert(1)", "javascript"),
    ("vbscript:msgbox(1)", "vbscript"),
    ("data:text/html;base64,PHNjcmlwdD4=", "data"),
    ("DATA:image/svg+xml,<svg onload=alert(1)>", "data"),
]


@pytest.mark.parametrize(("url", "scheme"), DANGEROUS_URLS)
def test_dangerous_schemes_are_seen_as_a_browser_reads_them(url: str, scheme: str) -> None:
    assert dangerous_scheme(url) == scheme


@pytest.mark.parametrize(
    "url", ["https://example.com/javascript:x", "/relative/data:x", "#javascript", "mailto:a@b.c", "notes.html", ""]
)
def test_ordinary_urls_pass(url: str) -> None:
    assert dangerous_scheme(url) is None


def test_markup_violations_name_every_element_and_url() -> None:
    elements = [
        ("p", []),
        ("a", [("href", "https://example.com")]),
        ("iframe", [("src", "https://example.com")]),
        ("object", [("data", "javascript:x")]),
        ("embed", [("src", "x.swf")]),
        ("a", [("href", "javascript:alert(1)")]),
        ("img", [("src", "data:image/png;base64,AAAA"), ("srcset", "a.png 1x, javascript:x 2x")]),
        ("form", [("action", "vbscript:x")]),
        ("button", [("formaction", "javascript:x")]),
        ("iframe", [("srcdoc", "<script>x</script>")]),
        ("a", [("xlink:href", "javascript:x")]),
    ]
    assert markup_violations(elements) == [
        "<iframe> is forbidden: a memory file does not embed other documents",
        "<object> is forbidden: a memory file does not embed plugins or documents",
        "javascript: URL in the data of <object>: a memory file does not execute",
        "<embed> is forbidden: a memory file does not embed plugins or documents",
        "javascript: URL in the href of <a>: a memory file does not execute",
        "data: URL in the src of <img>: a memory file does not execute",
        "javascript: URL in the srcset of <img>: a memory file does not execute",
        "vbscript: URL in the action of <form>: a memory file does not execute",
        "javascript: URL in the formaction of <button>: a memory file does not execute",
        "<iframe> is forbidden: a memory file does not embed other documents",
        "srcdoc attribute on <iframe>: a memory file does not embed other documents",
        "javascript: URL in the xlink:href of <a>: a memory file does not execute",
    ]
    assert markup_violations([("p", []), ("mark", []), ("a", [("href", "notes/other.html")])]) == []
