"""`perfmodel` entry point: a click group whose subcommands are imported only when run.

Start-up speed matters (`perfmodel --help` <= 0.25 s), so nothing heavy (numpy, matplotlib,
torch) is imported here; each subcommand module imports what it needs.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from perfmodel.errors import InputError, InputErrors, one_line

# name -> (module, attribute, one-line help). The help is here so `--help` needs no imports.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "archs": ("perfmodel.cli.cmd_arch", "archs_command", "Table of all known GPUs and their peaks."),
    "arch": ("perfmodel.cli.cmd_arch", "arch_group", "Show one GPU's spec, or print a template."),
    "roofline": ("perfmodel.cli.cmd_roofline", "roofline_command", "Hierarchical roofline of a GPU."),
    "predict": ("perfmodel.cli.cmd_predict", "predict_command", "Predict time and bound of kernels."),
    "validate": ("perfmodel.cli.cmd_validate", "validate_command", "Read rocprof output and compare."),
    "model": ("perfmodel.cli.cmd_model", "model_command", "Predict a whole transformer step, per op and layer."),
    "kernels": ("perfmodel.cli.cmd_kernels", "kernels_command", "Kernel model families and their case keys (predict)."),
    "kernel": ("perfmodel.cli.cmd_kernel", "kernel_group", "Included Triton kernels: list, inspect compiled code."),
    "profile": ("perfmodel.cli.cmd_profile", "profile_command", "Plan (and run) the rocprofv3 measurement."),
    "doctor": ("perfmodel.cli.cmd_doctor", "doctor_command", "What produced a profile, what it holds and lacks."),
}


class BadInput(click.ClickException):
    """An InputError as click sees it: one line on stderr (one per bad input), exit status 2."""

    exit_code = 2

    def __init__(self, lines: list[str]):
        super().__init__(lines[0] if lines else "bad input")
        self.lines = lines

    def show(self, file=None) -> None:
        for line in self.lines:
            click.echo(f"error: {line}", err=True)


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand is invoked."""

    def list_commands(self, ctx):
        return [n for n in COMMANDS if self._available(n)]

    @staticmethod
    def _available(name: str) -> bool:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None

    def get_command(self, ctx, name):
        if name not in COMMANDS or not self._available(name):
            return None
        mod, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(mod), attr)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputErrors as e:
            raise BadInput(e.lines()) from None
        except InputError as e:
            raise BadInput([str(e)]) from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Every error is one ``error:`` line on stderr: input and usage errors exit 2.

        An exception nobody anticipated is a bug: as a last resort it becomes one line too
        (exit 1), with the full traceback when PERFMODEL_DEBUG is set.
        """
        import os
        import sys

        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except BadInput as e:
            e.show()
            sys.exit(e.exit_code)
        except click.UsageError as e:
            cmd = e.ctx.command_path if e.ctx else "perfmodel"
            click.echo(f"error: {one_line(e.format_message())} (see {cmd} --help)", err=True)
            sys.exit(2)
        except click.ClickException as e:
            click.echo(f"error: {one_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        except (KeyboardInterrupt, BrokenPipeError):
            sys.exit(130 if not isinstance(sys.exc_info()[1], BrokenPipeError) else 1)
        except Exception as e:  # noqa: BLE001 - the last resort, see the docstring
            if os.environ.get("PERFMODEL_DEBUG"):
                raise
            click.echo(f"error: internal error ({type(e).__name__}: {one_line(str(e), 200)}); "
                       "please report it with PERFMODEL_DEBUG=1 output", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def format_commands(self, ctx, formatter):
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="perfmodel")
def cli() -> None:
    """perfmodel: roofline performance models for AMD Instinct and Radeon GPUs.

    Predict a kernel's time and bound before running it; read rocprof output after.
    """


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")  # plots go to files; no GUI toolkit at start-up
    cli.main(args=argv, prog_name="perfmodel")
