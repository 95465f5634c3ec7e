"""rebinding.after_detaching_rebinding: the statements a detaching rebinding of a name reaches."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.rebinding import after_detaching_rebinding


def test_the_rebinding_reaches_up_to_the_next_binding_of_the_name() -> None:
    function = cst.parse_module(
        textwrap.dedent(
            """
            def f(model, xs):
                out = []
                for x in xs:
                    out.append(model(x))
                out = torch.cat(out).detach()
                print(out)
                if xs:
                    out = other(xs)
                print(out)
            """
        )
    ).body[0]
    body = function.body.body  # type: ignore[attr-defined]
    reached = after_detaching_rebinding(function, "out", body[1])
    assert reached == [body[3]]  # `print(out)`; not the `if` that binds it again, nor what follows
