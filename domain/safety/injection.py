"""Prompt-injection defence: :func:`is_prompt_injection` (docs/decisions.md#d4).

The reference's rules R1 and R2, plus the plural ``ignore instructions`` and the ``disregard previous
instructions`` family, in the JavaScript regex dialect (:mod:`domain.jsregex`).
"""

from __future__ import annotations

import re
from typing import Final

from domain.jsregex import js_compile as _js

__all__ = ["is_prompt_injection"]

_I: Final = re.IGNORECASE

#: R1: an instruction-overriding phrase.
_INJECTION_R1: Final = _js(
    r"\b(ignore\s+all|ignore\s+previous|ignore\s+instructions?|overwrite\s+system|overwrite\s+rules"
    r"|forget\s+all|delete\s+root)\b",
    _I,
)
#: R2: an overriding verb and an instruction target anywhere in the text.
_INJECTION_R2A: Final = _js(r"\b(ignore|instruction|overwrite)\b", _I)
_INJECTION_R2B: Final = _js(r"\b(previous|all|rules|behavior|prompt|system)\b", _I)
#: R3: the common "disregard/forget the previous instructions" family.
_INJECTION_R3: Final = _js(
    r"\b(?:disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|system)"
    r"\s+(?:instructions?|prompts?|rules|messages?|context)\b",
    _I,
)


def is_prompt_injection(text: str) -> bool:
    """True when ``text`` reads like an attempt to override the agent's instructions.

    The reference's R1 (with ``instruction`` also matching ``instructions``), R2 (an overriding verb
    and an instruction target anywhere, deliberately broad: ``Ignore lint warnings for all generated
    code`` is rejected, because a memory is replayed into every future system prompt and a rejected
    memory can simply be rephrased), and R3 (``disregard previous instructions``).
    """
    return bool(
        _INJECTION_R1.search(text)
        or (_INJECTION_R2A.search(text) and _INJECTION_R2B.search(text))
        or _INJECTION_R3.search(text)
    )
