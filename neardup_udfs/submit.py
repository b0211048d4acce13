"""What every spark-submit entry point shares: a parser with a flag for every key of the
job's config class, the config loaded (and refused, exit status 2) before Spark starts, the
run, its one summary line, and errors on the stream the user sees."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from pyspark.sql import SparkSession

from neardup_udfs import settings
from neardup_udfs.config import ConfigError
from neardup_udfs.io.readers import InputError

__all__ = ["Job", "job_main", "job_parser", "report_error", "signals_end_the_run"]

C = TypeVar("C")
S = TypeVar("S")


def job_parser(prog: str, description: str, cls: type, config_file: str) -> argparse.ArgumentParser:
    """A job's argument parser: ``--config`` (the TOML file, ``config_file`` in the help)
    and a flag for every key of the config class ``cls``
    (``settings.add_arguments``: each defaults to None, so the file's value stands)."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--config", help=f"TOML file ({config_file}); flags override it")
    settings.add_arguments(p, cls)
    return p


@dataclass(frozen=True)
class Job(Generic[C, S]):
    """A spark-submit job: its config class (every key a flag) and TOML file, its run, and
    the line it prints when the run succeeds. ``jobs/<job>.py`` declares one and exposes
    its ``build_parser`` and ``main``."""

    prog: str  # the script's name, as spark-submit is given it
    description: str
    config: type[C]
    config_file: str  # conf/<job>.toml, named in --config's help
    run: Callable[[SparkSession, C], S]
    describe: Callable[[C, S], str]
    extend: Callable[[argparse.ArgumentParser], None] | None = None  # arguments of its own
    local: Callable[[C], S | None] | None = None  # a run without Spark, tried first

    def build_parser(self) -> argparse.ArgumentParser:
        """``--config`` and a flag for every key of the config class, then the
        job's own arguments."""
        p = job_parser(self.prog, self.description, self.config, self.config_file)
        if self.extend is not None:
            self.extend(p)
        return p

    def main(self, argv: Sequence[str] | None = None) -> int:
        """``job_main`` of this job: 0 on success, 2 when the config or the input is wrong."""
        return job_main(
            argv,
            prog=self.prog,
            parser=self.build_parser(),
            load=partial(settings.load, self.config),
            run=self.run,
            describe=self.describe,
            local=self.local,
        )


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def signals_end_the_run() -> Iterator[None]:
    """Within: SIGTERM or SIGINT sent to this process ends the run with SystemExit (status
    128 + the signal's number) raised where it is, so every cleanup of the run runs as it
    does for a failure (its scratch folder removed, its output's lock released, the Spark
    session stopped); a signal that comes while that cleanup runs is logged and ignored.
    The handlers before are back after. Outside the main thread, nothing changes (Python
    takes signals there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if stopping:
            logging.getLogger("neardup").warning("%s while the run stops: ignored", name)
            return
        stopping.append(signum)
        logging.getLogger("neardup").warning("%s: the run stops and removes its scratch", name)
        raise SystemExit(128 + signum)

    before = {s: signal.signal(s, stop) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


@signals_end_the_run()
def job_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    parser: argparse.ArgumentParser,
    load: Callable[..., C],
    run: Callable[[SparkSession, C], S],
    describe: Callable[[C, S], str],
    local: Callable[[C], S | None] | None = None,
) -> int:
    """Parse ``argv``, load the config (``--config`` file plus flags) before Spark starts,
    run (``local(config)`` first, when given: a summary, or None when the run needs Spark),
    print ``describe(config, summary)``.

    Returns:
        0 on success; 2 when the config or the input is wrong (one line on stderr). SIGTERM
        or SIGINT ends the run through its cleanup (:func:`signals_end_the_run`): exit
        status 128 + the signal's number.
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    parser.add_argument(
        "--no-progress-bar",
        dest="no_progress_bar",
        action="store_true",
        help="no Spark console progress bar (for schedulers such as Airflow: logs stay lines)",
    )
    args = vars(parser.parse_args(argv))
    quiet = args.pop("no_progress_bar")
    path = args.pop("config")
    try:
        config = load(path, **args)
    except ConfigError as e:
        report_error(f"{prog}: error: {e}")
        return 2
    if local is not None:
        try:
            done = local(config)
        except InputError as e:
            report_error(f"{prog}: error: {e}")
            return 2
        if done is not None:
            print(describe(config, done))
            return 0
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(f"neardup-{prog.removesuffix('.py')}")
    if quiet:
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    spark = builder.getOrCreate()
    try:
        summary = run(spark, config)
    except InputError as e:
        report_error(f"{prog}: error: {e}", spark)
        return 2
    finally:
        spark.stop()
    print(describe(config, summary))
    return 0


def report_error(line: str, spark: SparkSession | None = None) -> None:
    """``line`` (newlines folded to spaces) on the error stream of the process the user
    started: the Python process's stderr, or, under ``spark-submit`` (whose launcher merges
    the Python driver's stderr into its stdout), the JVM's ``System.err``."""
    line = " ".join(line.split("\n"))
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not launched by spark-submit
        print(line, file=sys.stderr, flush=True)
        return
    try:
        jvm: Any
        if spark is not None:
            jvm = spark.sparkContext._jvm
        else:
            from pyspark.java_gateway import launch_gateway

            jvm = launch_gateway().jvm  # spark-submit's own gateway: connects, starts nothing
        sys.stdout.flush()
        jvm.java.lang.System.err.println(line)
        jvm.java.lang.System.err.flush()
    except Exception:  # the JVM is gone: the merged stream is all there is
        print(line, file=sys.stderr, flush=True)
