"""Input that is not CoNLL-U: words only, read into a :class:`depfs.Treebank`.

- *horizontal* text: one sentence per line, tokens split on spaces (UDPipe's name);
- *vertical* text: one token per line, a blank line between sentences;
- raw text, split into sentences and tokens by a spaCy blank pipeline
  (``spacy.blank(LANG)`` and its rule-based sentencizer: no model download).

Every sentence gets ``# sent_id = N`` (from 1, in input order) and ``# text = ...``; the
tag, head and label columns are empty (``_``), so a parser that reads tags needs a tagger
first. The words are written as CoNLL-U text and read by the CoNLL-U reader.

>>> tb = depfs.read_text("input.txt", format="horizontal")
>>> tb = depfs.text_to_treebank("Dogs bark .\\nCats sleep .\\n")   # format detected
>>> tb = depfs.tokens_to_treebank([["Dogs", "bark", "."]])

Errors (:class:`depfs.errors.FormatError`) name the file, the line and the problem.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import re
import warnings
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from . import _core
from .errors import FormatError
from .files import MODEL_MAGIC

__all__ = [
    "FORMATS",
    "detect_format",
    "read_text",
    "text_to_treebank",
    "tokens_to_treebank",
]

#: The input formats of ``depfs parse --input`` (raw text is ``--tokenizer``).
FORMATS = ("conllu", "horizontal", "vertical")

#: Lines looked at to detect the format.
DETECT_LINES = 200

_CONLLU_ID = re.compile(r"[0-9]+([-.][0-9]+)?\t")
_CONLLU_COMMENT = re.compile(r"#\s*(sent_id|text)\s*=")
_SPACES = re.compile(r"[ \t]+")

#: Tabs that make a line a CoNLL-U word line whatever its ID (a word line has 9; text
#: given as words has none, or a stray one).
CONLLU_TABS = 5


@dataclass
class Word:
    """One word of a sentence built from text (``_``: no value)."""

    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    misc: str = "_"


def detect_format(lines: Iterable[str], name: str = "<input>") -> str:
    """``"conllu"``, ``"horizontal"`` or ``"vertical"`` from the first lines of an input
    (`name` names it in an error).

    CoNLL-U when the first line that is not a ``#`` comment starts with a word ID and a
    tab, or holds at least :data:`CONLLU_TABS` tabs, or follows a ``# sent_id =`` or
    ``# text =`` comment: a malformed CoNLL-U file is still read as CoNLL-U, whose reader
    says what is wrong (text with a typo in an ID, or with spaces for tabs, is not parsed
    as words). Otherwise horizontal when a line holds a space between two tokens, else
    vertical; so too when every line starts with ``#`` and none is such a comment (text:
    ``#MeToo is trending .``). Empty input is CoNLL-U (no sentences). A depfs model file
    is refused."""
    first = True
    has_space = False
    conllu_comment = False
    hashed = False  # a line that starts with '#' (a comment, or text: "#MeToo is ...")
    for n, line in enumerate(lines):
        if n >= DETECT_LINES:
            break
        line = line.rstrip("\r\n")
        if n == 0:
            if line.startswith(MODEL_MAGIC.decode()):
                raise FormatError(f"{name}: a depfs model file, not a treebank or text")
            line = line.removeprefix("\ufeff")  # a byte-order mark is not text
        if first and line.startswith("#"):
            conllu_comment |= bool(_CONLLU_COMMENT.match(line))
            hashed = True
        elif first and line.strip():
            if conllu_comment or _CONLLU_ID.match(line) or line.count("\t") >= CONLLU_TABS:
                return "conllu"
            first = False
        if _SPACES.search(line.strip(" \t")):
            has_space = True
    if first and (conllu_comment or not hashed):
        return "conllu"
    return "horizontal" if has_space else "vertical"


def _decode(raw: bytes, name: str, line_no: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(
            f"{name}:{line_no}: invalid UTF-8 (byte {e.start + 1} of the line)"
        ) from None


def _lines(stream: Iterable[bytes], name: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, text without the line end); a BOM at the start is dropped.
    A CR inside a line is refused, as the CoNLL-U reader refuses it: lines ended by CR
    alone would be read as one line (words glued across them, `.\\rA`)."""
    n = 0
    if hasattr(stream, "readline"):  # a file: its lines read with a bound
        stream = bounded_lines(stream, name)
    try:
        for n, raw in enumerate(stream, 1):
            line = _decode(raw, name, n).rstrip("\r\n")
            if "\r" in line:
                raise FormatError(f"{name}:{n}: {CR_ONLY}")
            if n == 1 and line.startswith("\ufeff"):
                line = line[1:]
            yield n, line
    except GZIP_ERRORS as e:
        raise FormatError(gzip_message(name, n, e)) from None


#: The CoNLL-U reader's message for lines ended by CR alone (`io::conllu::CR_ONLY`).
CR_ONLY = "CR line ends (a line ends in CR alone, as on old Macs): convert them to LF"

#: What a damaged gzip stream raises while it is read.
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def gzip_message(name: str, lines: int, err: BaseException) -> str:
    """The error of a gzip stream that breaks after `lines` good lines."""
    return f"{name}: read error after line {lines}: damaged gzip data ({err})"


def _sentences(
    lines: Iterable[tuple[int, str]], format: str, name: str
) -> Iterator[tuple[str, list[Word]]]:
    """(text, words) per sentence of horizontal or vertical text."""
    if format == "horizontal":
        for _, line in lines:
            tokens = _SPACES.split(line.strip(" \t"))
            if tokens != [""]:
                yield " ".join(tokens), [Word(t) for t in tokens]
    elif format == "vertical":
        words: list[Word] = []
        for n, line in lines:
            token = line.strip(" ")
            if not token.strip():
                if words:
                    yield " ".join(w.form for w in words), words
                    words = []
                continue
            if "\t" in token:
                raise FormatError(
                    f"{name}:{n}: a tab inside the token {token!r}: vertical text holds one "
                    "token per line (CoNLL-U? --input conllu)"
                )
            words.append(Word(token))
        if words:
            yield " ".join(w.form for w in words), words
    else:
        raise ValueError(f"unknown text format {format!r} (known: horizontal, vertical)")


def _conllu(sentences: Iterable[tuple[str, Sequence[Word]]], first_id: int) -> str:
    """CoNLL-U text of `sentences`, numbered from `first_id`."""
    out = []
    for i, (text, words) in enumerate(sentences, first_id):
        out.append(f"# sent_id = {i}\n# text = {text}\n")
        for j, w in enumerate(words, 1):
            out.append(
                f"{j}\t{w.form}\t{w.lemma}\t{w.upos}\t{w.xpos}\t{w.feats}\t_\t_\t_\t{w.misc}\n"
            )
        out.append("\n")
    return "".join(out)


def _batches(
    sentences: Iterator[tuple[str, list[Word]]], batch_size: int
) -> Iterator[_core.Treebank]:
    """Treebanks of `batch_size` sentences (the last may be smaller), ids running on."""
    done = 0
    while True:
        chunk = []
        for s in sentences:
            chunk.append(s)
            if len(chunk) == batch_size:
                break
        if not chunk:
            return
        yield _core.Treebank.from_string(_conllu(chunk, done + 1))
        done += len(chunk)


def _open(path: str | os.PathLike[str]) -> BinaryIO:
    """A file, gunzipped when it starts with the gzip magic bytes. Opened once and
    sniffed without consuming (`peek`), so that a pipe, FIFO or `/dev/stdin` loses
    nothing."""
    f = open(path, "rb")  # noqa: SIM115 (returned open; closed with the gzip stream)
    try:
        magic = f.peek(2)[:2]
    except BaseException:
        f.close()
        raise
    if magic == b"\x1f\x8b":
        return _Gunzipped(f)  # type: ignore[return-value]
    return f


#: The longest line read (as the CoNLL-U reader's `io::conllu::MAX_LINE_BYTES`): an
#: input without line ends (`/dev/zero`, a sparse file, a gzip of zeros) grew memory
#: without bound.
MAX_LINE_BYTES = 64 << 20


def bounded_lines(f: Any, name: str, first: int = 1) -> Iterator[bytes]:
    """The lines of a binary file object (`readline`), each refused once it passes
    :data:`MAX_LINE_BYTES` without a line end, naming `name` and the line (counted
    from `first`). O(bytes)."""
    for n in itertools.count(first):
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES:
            raise FormatError(
                f"{name}:{n}: a line of more than {MAX_LINE_BYTES >> 20} MiB with no line end: "
                "not CoNLL-U or text"
            )
        yield line


def stream_lines(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The lines of a binary stream read as it comes (stdin), gunzipped when it starts
    with the gzip magic bytes (peeked: nothing is lost); damaged gzip data is an error
    naming `name` and the line."""
    if not hasattr(stream, "peek"):  # (a BytesIO: Python's own stdin has it)
        stream = io.BufferedReader(stream)  # type: ignore[type-var]
    if stream.peek(2)[:2] != b"\x1f\x8b":  # type: ignore[attr-defined]
        return bounded_lines(stream, name)
    return _gzip_lines(gzip.GzipFile(fileobj=stream, mode="rb"), name)


def _gzip_lines(f: gzip.GzipFile, name: str) -> Iterator[bytes]:
    n = 0  # the lines read before an error
    try:
        for line in bounded_lines(f, name):
            yield line
            n += 1
    except GZIP_ERRORS as e:
        raise FormatError(gzip_message(name, n, e)) from None


class _Gunzipped(gzip.GzipFile):
    """A gzip stream over an open file that closes the file with it."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def text_batches(
    stream: Iterable[bytes],
    format: str,
    *,
    name: str,
    batch_size: int = 5000,
    tokenizer: Any = None,
) -> Iterator[_core.Treebank]:
    """Treebanks of up to `batch_size` sentences read from a binary `stream` of
    horizontal or vertical text, or of raw text split by `tokenizer` (a
    :class:`SpacyTokenizer`; `format` is then ignored). Errors name `name` and the line."""
    lines = _lines(stream, name)
    if tokenizer is not None:
        sentences = tokenizer.sentences(lines, name)
    else:
        sentences = _sentences(lines, format, name)
    return _batches(sentences, batch_size)


def read_text(
    path: str | os.PathLike[str], format: str | None = None, *, tokenizer: Any = None
) -> _core.Treebank:
    """Reads a file of horizontal or vertical text (or CoNLL-U; gzipped or not) into a
    Treebank. ``format``: ``"horizontal"``, ``"vertical"``, ``"conllu"`` or None
    (detected by :func:`detect_format`). ``tokenizer``: a :class:`SpacyTokenizer` (or
    ``"spacy:LANG"``) for raw text."""
    name = os.fspath(path)
    try:
        with _open(path) as f:
            data = f.read()
    except OSError as e:  # as read_conllu says it: one line naming the file
        from .errors import DepfsIOError

        raise DepfsIOError(f"{name}: {e.strerror or e}") from None
    return text_to_treebank(data, format, name=name, tokenizer=tokenizer)


def text_to_treebank(
    text: str | bytes,
    format: str | None = None,
    *,
    name: str = "<string>",
    tokenizer: Any = None,
) -> _core.Treebank:
    """:func:`read_text` on a string (or bytes) instead of a file; errors name `name`."""
    # The arguments are checked whatever the text (blank text skipped them).
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown input format {format!r} (known: {', '.join(FORMATS)})")
    if tokenizer is not None and format is not None:
        raise ValueError(f"tokenizer reads raw text: leave out format={format!r}")
    if isinstance(tokenizer, str):
        tokenizer = SpacyTokenizer.from_spec(tokenizer)
    elif tokenizer is not None and not isinstance(tokenizer, SpacyTokenizer):
        raise TypeError(
            f"tokenizer must be a SpacyTokenizer or 'spacy:LANG', got {type(tokenizer).__name__}"
        )
    if not isinstance(text, (str, bytes)):  # (None said "'NoneType' object has no attribute")
        raise TypeError(f"text must be a str or bytes, got {type(text).__name__}")
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not data.strip():
        return _core.Treebank.from_string("")  # as Treebank.from_string(""): no sentence
    if format is None and tokenizer is None:
        format = detect_format(io.TextIOWrapper(io.BytesIO(data), errors="replace"), name)
    if format == "conllu" and tokenizer is None:
        return _core.Treebank.from_bytes(data, name=name)
    out = list(
        text_batches(
            io.BytesIO(data), format or "", name=name, tokenizer=tokenizer, batch_size=2**62
        )
    )
    return out[0] if out else _core.Treebank.from_string("")


def tokens_to_treebank(sentences: Iterable[Sequence[str]]) -> _core.Treebank:
    """A Treebank of the given token lists (``# sent_id`` from 1, ``# text`` the tokens
    joined by spaces). A token must be a non-empty string without tabs or line breaks."""
    # A str is a sequence too: "abc" would be three one-letter sentences.
    if isinstance(sentences, (str, bytes)):
        raise TypeError("sentences must be lists of tokens, got a str (split it first)")
    built = []
    for i, tokens in enumerate(sentences, 1):
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
            raise TypeError(f"sentence {i} must be a list of tokens, got {type(tokens).__name__}")
        tokens = list(tokens)
        if not tokens:  # (the reader said "<string>:1: sentence without word lines")
            raise FormatError(f"sentence {i} has no token")
        for t in tokens:
            if not isinstance(t, str):
                raise TypeError(f"sentence {i}: token {t!r} is a {type(t).__name__}, not a str")
            if not t or t.strip() == "" or any(c in t for c in "\t\n\r"):
                raise FormatError(f"sentence {i}: token {t!r} is empty or holds a tab/newline")
        built.append((" ".join(tokens), [Word(t) for t in tokens]))
    return _core.Treebank.from_string(_conllu(built, 1))


# --------------------------------------------------------------------------- raw text


class SpacyTokenizer:
    """Raw text to sentences with a blank spaCy pipeline: ``spacy.blank(lang)`` plus the
    rule-based ``sentencizer`` (no model download). A paragraph (lines up to a blank
    line, joined by spaces) is tokenised at a time; whitespace tokens are dropped and a
    word not followed by a space gets ``SpaceAfter=No``."""

    #: A paragraph longer than this (characters) is cut at a line end first; a line longer
    #: than this is cut at whitespace (spaCy refuses a text over ``nlp.max_length``).
    MAX_PARAGRAPH = 100_000

    def __init__(self, lang: str) -> None:
        try:
            import spacy
        except ImportError:
            raise ImportError(
                f"--tokenizer spacy:{lang} needs spaCy: pip install 'depfs[spacy]'"
            ) from None
        try:
            self.nlp = spacy.blank(lang)
        except (ImportError, KeyError, ValueError):
            raise ValueError(f"--tokenizer spacy:{lang}: spaCy has no language {lang!r}") from None
        self.nlp.add_pipe("sentencizer")
        self.lang = lang

    @classmethod
    def from_spec(cls, spec: str) -> SpacyTokenizer:
        """From ``"spacy:LANG"`` (the ``--tokenizer`` value)."""
        kind, _, lang = spec.partition(":")
        if kind != "spacy" or not lang:
            raise ValueError(f"--tokenizer {spec!r}: expected spacy:LANG, e.g. spacy:en")
        return cls(lang)

    def _paragraphs(self, lines: Iterable[tuple[int, str]], name: str) -> Iterator[tuple[int, str]]:
        """(first line number, text) of each paragraph, cut as :data:`MAX_PARAGRAPH` says."""
        para: list[str] = []
        size = first = 0
        for n, line in lines:
            line = line.strip()
            if len(line) > self.MAX_PARAGRAPH:
                if para:
                    yield first, " ".join(para)
                    para, size = [], 0
                pieces = _cut(line, self.MAX_PARAGRAPH)
                # A piece with no whitespace was cut inside a word (none to cut at).
                inside = any(not _SPACE.search(p) for p in pieces[:-1])
                warnings.warn(
                    f"{name}:{n}: a line of {len(line):,} characters is cut at whitespace into "
                    f"{len(pieces)} pieces of at most {self.MAX_PARAGRAPH:,}: a sentence may be "
                    "cut where they meet"
                    + ("; a word longer than that is cut inside it" if inside else ""),
                    stacklevel=2,
                )
                yield from ((n, piece) for piece in pieces)
                continue
            if line:
                first = first if para else n
                para.append(line)
                size += len(line) + 1
            if para and (not line or size > self.MAX_PARAGRAPH):
                yield first, " ".join(para)
                para, size = [], 0
        if para:
            yield first, " ".join(para)

    def sentences(
        self, lines: Iterable[tuple[int, str]], name: str = "<text>"
    ) -> Iterator[tuple[str, list[Word]]]:
        for n, paragraph in self._paragraphs(lines, name):
            try:
                doc = self.nlp(paragraph)
            except ValueError as e:  # spaCy's refusal of a text, named by its line here
                raise FormatError(f"{name}:{n}: {e}") from None
            for sent in doc.sents:
                words = [
                    Word(t.text, misc="_" if t.whitespace_ else "SpaceAfter=No")
                    for t in sent
                    if not t.is_space
                ]
                if words:
                    words[-1].misc = "_"
                    yield " ".join(sent.text.split()), words


#: The last whitespace of a text (O(length): ``\S*`` stops at the next whitespace).
_LAST_SPACE = re.compile(r"\s\S*\Z")
_SPACE = re.compile(r"\s")


def _cut(line: str, limit: int) -> list[str]:
    """`line` in pieces of at most `limit` characters, each cut at its last whitespace
    (where a window has none, inside a word). O(len(line))."""
    pieces = []
    start = 0
    while len(line) - start > limit:
        m = _LAST_SPACE.search(line, start, start + limit + 1)
        end = m.start() if m and m.start() > start else start + limit
        pieces.append(line[start:end])
        start = end + 1 if m and end == m.start() else end
    pieces.append(line[start:])
    return pieces
