"""What rules ask about code: names, grad mode, loops, and which values carry autograd history.

Nothing here knows any particular rule; everything here is shared by several.
"""

from memlint.analysis.context import Context, GradMode
from memlint.analysis.values import Kind, Value

__all__ = ["Context", "GradMode", "Kind", "Value"]
