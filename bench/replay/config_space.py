"""A replay case's config space: the product of its named knobs, num_warps and num_stages, as Triton Configs."""

import itertools

import triton


def product_space(axes: dict, warps, stages) -> list:
    """Every combination of `axes` (name -> values), `warps` and `stages`, knobs in the order given."""
    names = list(axes)
    return [
        triton.Config(dict(zip(names, values)), num_warps=w, num_stages=s)
        for values in itertools.product(*axes.values())
        for w in warps
        for s in stages
    ]
