"""What the parser's parts (ModelReader, QuantityReader, QuantityMeaning, PhraseReader) share: the attributes
_Parser.__init__ sets and the methods one part calls on another, declared for the type checker only. Annotations
without values and a TYPE_CHECKING block: nothing here exists at run time, so no part's behaviour changes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

if TYPE_CHECKING:
    from bot.text.numbers import Lexicon, Token
    from bot.text.parse.quantities import _Tag


class ParserState:
    """The state of one parse, set by bot.text.parse.parser._Parser.__init__."""

    lexicon: Lexicon
    kb: Any
    expected: Optional[str]
    folded: str
    tokens: List[Token]
    n: int
    content_count: int
    names_resolved: int
    consumed: List[bool]
    tags: List[Optional[_Tag]]
    result: Dict[str, object]
    ambiguous: List[str]
    model_at: Optional[int]
    families: List[Tuple[str, Optional[str]]]
    family_at: Dict[str, int]
    name_hits: List[Tuple[int, int, str]]
    sizes: List[Tuple[int, int, float]]
    version_assumed: Dict[str, bool]
    versionless: Set[str]
    method_measured: bool

    if TYPE_CHECKING:
        # defined by one part, called by another
        def span_text(self, first: int, end: int) -> str: ...  # QuantityReader

        def _preset_for(self, family: str, size_b: float,
                        version: Optional[str] = None) -> Optional[str]: ...  # ModelReader

        def _typed_version(self, preset_id: str) -> Optional[str]: ...  # ModelReader
