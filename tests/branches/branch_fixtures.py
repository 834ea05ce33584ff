"""Two branches of one repository as real git worktrees, for the branch tests:
``main`` and ``develop``, where develop changes one file of main,
adds one and removes one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def _module(i: int) -> str:
    return (
        f'"""Module {i} of the shop."""\n\n\n'
        f"def price_{i}(amount):\n    total = amount * {i + 2}\n    return round(total, 2)\n\n\n"
        f"def label_{i}(name):\n    text = name.strip().title()\n    return f'{{text}} #{i}'\n"
    )


MAIN_FILES = {f"shop/m{i:02d}.py": _module(i) for i in range(10)}
MAIN_FILES["shop/billing.py"] = (
    "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n\n\n"
    "def refund_policy(order):\n    return order.days < 30\n"
)
MAIN_FILES["shop/legacy.py"] = "def old_checkout(cart):\n    return cart.pay()\n"
# develop: billing.py's refund rule changes (invoice_total stays), legacy.py goes, coupons.py comes.
DEVELOP_CHANGES = {
    "shop/billing.py": (
        "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n\n\n"
        "def refund_policy(order):\n    return order.days < 60 and not order.final_sale\n"
    ),
    "shop/coupons.py": "def apply_coupon(cart, code):\n    return cart.discount(code)\n",
}
SAME = sorted(p for p in MAIN_FILES if p not in ("shop/billing.py", "shop/legacy.py"))


@dataclass(frozen=True)
class Branches:
    main: Path
    develop: Path


def make_branches(make_repo, git, write_tree) -> Branches:
    """``main`` (a repository) and ``develop`` (its worktree on branch
    develop), made with the shared ``make_repo``, ``git`` and ``write_tree``
    fixtures (a test file's ``branches`` fixture calls this)."""
    main = make_repo(MAIN_FILES, name="app-main")
    develop = main.parent / "app-develop"
    git(main, "worktree", "add", "-q", "-b", "develop", str(develop))
    write_tree(develop, DEVELOP_CHANGES)
    (develop / "shop/legacy.py").unlink()
    git(develop, "add", "-A")
    git(develop, "commit", "-q", "-m", "develop")
    return Branches(main, develop)


def indexed(made: Branches) -> Branches:
    """Both branches indexed, main first (develop copies from it, its sibling worktree)."""
    from repolens import service

    for root in (made.main, made.develop):
        service.index_repo(root)
    return made
