"""`perfmodel profile`: plan the rocprofv3 measurement from the prediction (and run it on a GPU)."""

from __future__ import annotations

import click


def _included_cases(
    names: list[str], params: dict[str, str], dtype: str | None
) -> tuple[list[dict], list[str], str]:
    """(kernels with their cases, the run.py command, the kernel symbol regex) for included kernels."""
    import re

    from perfmodel.inspect.catalog import all_specs, get_spec, kernels_dir, resolve

    specs = [get_spec(n) for n in names] if names else list(all_specs().values())
    if params and len(specs) != 1:
        from perfmodel.errors import InputError

        raise InputError("--set applies to one kernel; name a single KERNEL", key="--set")
    kernels, items, symbols = [], [], []
    for s in specs:
        words = dict(params) if len(specs) == 1 else {}
        keys, _cx, _ = resolve(s, words, dtype)
        kernels.append({"name": s.name, "keys": keys, "case": s.case(keys), "symbol": s.fn.__name__})
        changed = {k: v for k, v in keys.items() if s.keys.get(k) != v}
        items.append(s.name + (":" + ",".join(f"{k}={v}" for k, v in changed.items()) if changed else ""))
        symbols.append(re.escape(s.fn.__name__))
    import os

    runner = kernels_dir() / "run.py"
    rel = os.path.relpath(runner)
    cmd = ["python", rel if not rel.startswith("..") else str(runner), *items]
    return kernels, cmd, "|".join(dict.fromkeys(symbols))


@click.command("profile")
@click.argument("kernels", nargs=-1)
@click.option(
    "--arch", default="mi300x", show_default=True, help="Arch key or archspec path (the GPU to profile)."
)
@click.option("--dtype", default=None, help="Data type of the included kernels.")
@click.option(
    "--cmd",
    "user_cmd",
    default=None,
    help="Profile your own command instead of the included kernels (give --case).",
)
@click.option(
    "--case",
    "cases",
    multiple=True,
    help="With --cmd: the perfmodel case(s) it runs, as 'KERNEL key=value ...'.",
)
@click.option("--kernel-regex", default=None, help="With --cmd: rocprofv3 kernel_include_regex (default .*).")
@click.option(
    "-o",
    "out",
    required=True,
    type=click.Path(file_okay=False),
    help="Plan folder (input.yaml/json, plan.json, run.sh; data under out/).",
)
@click.option(
    "--warm/--cold",
    default=False,
    show_default=True,
    help="Cold: flush caches before each launch (included kernels).",
)
@click.option("--iters", default=3, show_default=True, help="Launches per kernel.")
@click.option("--dry-run", is_flag=True, help="Write the plan only (no GPU needed).")
@click.option(
    "--set", "params", multiple=True, help="key=value for a single included kernel (e.g. --set m=8192)."
)
def profile_command(
    kernels, arch, dtype, user_cmd, cases, kernel_regex, out, warm, iters, dry_run, params
) -> None:
    """Write the rocprofv3 input (counters per pass within the GPU's per-block limits) and command.

    Without KERNELS, plans every included kernel. The output folder's data directory (out/)
    goes straight into `perfmodel validate`.

    \b
    perfmodel profile --dry-run --arch mi300x -o plan/
    perfmodel profile gemm --set m=8192 --set n=8192 --set k=8192 --arch mi300x -o plan/
    perfmodel profile --cmd "./my_app --size 4096" --case "gemm m=4096 n=4096 k=4096" --arch mi300x -o plan/ --dry-run
    """
    import shutil
    from pathlib import Path

    from perfmodel.cases import parse_kv
    from perfmodel.errors import InputError
    from perfmodel.profile_plan import plan, write_plan

    pwords = parse_kv(list(params), where="--set")
    if user_cmd:
        ks, command, regex = _user_cases(kernels, pwords, user_cmd, cases, kernel_regex, dtype)
    else:
        from perfmodel.inspect.catalog import require_triton

        require_triton()
        ks, command, regex = _included_cases(list(kernels), pwords, dtype)
        command += ["--iters", str(iters)] + ([] if warm else ["--flush"])
        if kernel_regex:
            regex = kernel_regex
    p = plan(ks, arch, command, cold=not warm, include_regex=regex)
    if not dry_run and (shutil.which("rocprofv3") is None or not Path("/dev/kfd").exists()):
        raise InputError(
            "no rocprofv3 or no AMD GPU (/dev/kfd) here; use --dry-run to write the plan", key="profile"
        )
    files = write_plan(p, out)
    _echo_plan(p, files)
    if dry_run:
        _echo_next_steps(p, out)
    else:
        _run_rocprof(p, out)


def _user_cases(kernels, pwords: dict, user_cmd: str, cases, kernel_regex: str | None,
                dtype: str | None) -> tuple[list[dict], list[str], str]:  # fmt: skip
    """(kernels to plan, command, include regex) for --cmd: the cases come from --case, since
    perfmodel cannot see what the user's command launches."""
    import shlex

    from perfmodel.cases import parse_kv
    from perfmodel.errors import InputError

    if kernels or pwords:
        raise InputError("give either --cmd with --case, or included KERNELS, not both", key="--cmd")
    if not cases:
        raise InputError(
            "--cmd needs at least one --case 'KERNEL key=value ...' to know what to measure", key="--case"
        )
    ks = []
    for i, c in enumerate(cases):
        words = c.split()
        if not words:
            raise InputError("empty case", key="--case")
        raw = parse_kv(words[1:], where=f"--case {i + 1}")
        raw["kernel"] = words[0]
        if dtype:
            raw.setdefault("dtype", dtype)
        ks.append({"name": words[0], "case": raw})
    return ks, shlex.split(user_cmd), kernel_regex or ".*"


def _echo_plan(p, files) -> None:
    """The plan's summary: counters per pass against the per-block limits, notes, files written."""
    usage = p.pass_usage()
    click.echo(f"plan for {p.arch} ({p.gfx}): {len(p.kernels)} kernel(s), {len(p.quantities)} quantities, "
               f"{sum(len(x) for x in p.passes)} counters in {len(p.passes)} pass(es) + 1 timing pass")  # fmt: skip
    for i, (cs, u) in enumerate(zip(p.passes, usage, strict=True), 1):
        click.echo(
            f"  pass {i}: "
            + " ".join(f"{b}={n}/{p.limits[b]}" for b, n in sorted(u.items()))
            + f"  ({len(cs)} counters)"
        )
    for n in p.notes:
        click.echo(f"  note: {n}")
    click.echo("wrote " + ", ".join(str(f) for f in files))


def _echo_next_steps(p, out) -> None:
    """--dry-run: the commands to run on the GPU machine, then to compare."""
    import shlex
    from pathlib import Path

    from perfmodel.profile_plan import rocprof_argv

    click.echo(
        "run on the GPU machine: " + shlex.join(rocprof_argv(str(Path(out) / "input.yaml"), p.command))
    )
    click.echo("then: " + shlex.join(["perfmodel", "validate", str(Path(out) / "out"), "--arch", p.arch]))


def _run_rocprof(p, out) -> None:
    """Run rocprofv3 on the plan here and say how to compare."""
    import shlex
    import subprocess
    from pathlib import Path

    from perfmodel.errors import InputError
    from perfmodel.profile_plan import rocprof_argv

    rc = subprocess.call(rocprof_argv(str(Path(out) / "input.yaml"), p.command))
    if rc != 0:
        raise InputError(f"rocprofv3 exited with status {rc}", key="profile")
    click.echo(
        "measured; compare with: "
        + shlex.join(["perfmodel", "validate", str(Path(out) / "out"), "--arch", p.arch])
    )
