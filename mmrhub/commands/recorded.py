"""A run's record (``RUN.json.meta.json``) read as its command line is: each recorded option goes through the
converter and bounds of the flag that sets it (``retrieve``'s and ``rerank``'s own parsers, built here, so each
option is declared once), and every problem is one line naming the record, the key and what was expected.

A record is a file anyone may hand over, so nothing in it is trusted more than a typed option: a ``num_workers`` of
100,000, a ``text_weight`` of NaN, a run named ``../data/mipr_corpus.jsonl`` or a ``settings`` that is a list are
refused before any work, as ``--num-workers 100000`` or ``--text-weight nan`` are.
"""

import argparse
import dataclasses

from mmrhub.commands import rerank
from mmrhub.commands import retrieve
from mmrhub.commands.parsing import Parser
from mmrhub.records.meta import RecordError
from mmrhub.records.meta import check_fields
from mmrhub.records.meta import cut
from mmrhub.records.meta import recorded_text
from mmrhub.records.meta import shown
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions

COMMANDS = {"retrieve": (RetrieveOptions, retrieve.add_arguments), "rerank": (RerankOptions, rerank.add_arguments)}

# Where an option's flag stores its value under another name than the field's (dotted field: argparse dest); a
# switch that turns a field off stores its opposite, a bool all the same.
DESTS = {
    "output.path": "output",
    "runtime.use_cache": "no_cache",
    "output.score": "no_eval",
    "shared_prefix": "no_shared_prefix",
}


def recorded_options(path, recorded: dict):
    """The ``RetrieveOptions`` or ``RerankOptions`` a record (``meta.read_meta``'s dict, read from ``path``)
    holds, each value checked as its flag checks it; fields the record lacks keep their defaults."""
    check_fields(path, recorded)
    cls, add_arguments = COMMANDS[recorded["command"]]
    actions = {action.dest: action for action in add_arguments(Parser(prog=recorded["command"]))._actions}
    return _options(path, cls, recorded["options"], "options", actions)


def _options(path, cls, record, where: str, actions: dict):
    if not isinstance(record, dict):
        raise RecordError(f"{path}: {where}: expected an object of {cls.__name__}'s fields, got {shown(record)}.")
    fields = {item.name: item for item in dataclasses.fields(cls)}
    unknown = sorted(set(record) - set(fields))
    if unknown:
        raise RecordError(
            f"{path}: {where}.{cut(unknown[0])}: not one of the options {cls.__name__} records "
            f"({', '.join(fields)}); was the record edited?"
        )
    values = {}
    for name, item in fields.items():
        dotted = f"{where}.{name}"
        if name not in record:
            if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING:
                raise RecordError(f"{path}: {dotted}: missing; every run records it.")
            continue
        if item.type is DataOptions:
            values[name] = _data(path, record[name], dotted, actions)
        elif dataclasses.is_dataclass(item.type):
            values[name] = _options(path, item.type, record[name], dotted, actions)
        else:
            dest = DESTS.get(dotted.removeprefix("options."), name)
            values[name] = _value(path, dotted, record[name], actions.get(dest), item)
    try:
        return cls(**values)
    except ValueError as err:  # a rule between fields (RerankOptions' sizes)
        raise RecordError(f"{path}: {where}: {err}") from None


def _data(path, record, where: str, actions: dict) -> DataOptions:
    if not isinstance(record, dict):
        raise RecordError(
            f"{path}: {where}: expected an object naming the benchmark and its data, got {shown(record)}."
        )
    benchmark = _value(path, f"{where}.benchmark", record.get("benchmark"), actions["benchmark"], None)
    rest = {key: value for key, value in record.items() if key != "benchmark"}
    fields = {item.name: item for item in dataclasses.fields(DataOptions) if item.name != "benchmark"}
    unknown = sorted(set(rest) - set(fields))
    if unknown:
        raise RecordError(f"{path}: {where}.{cut(unknown[0])}: not one of the data options ({', '.join(fields)}).")
    values = {
        name: _value(path, f"{where}.{name}", value, actions.get(name), fields[name]) for name, value in rest.items()
    }
    return DataOptions(benchmark, **values)


def _value(path, dotted: str, value, action, item):
    """``value`` as the flag ``action`` takes it (None: no flag sets the field, which keeps its default)."""
    if action is None:
        default = item.default
        if isinstance(default, bool):
            return _switch(path, dotted, value, "")
        if value != default:
            raise RecordError(f"{path}: {dotted}: expected {shown(default)} (no option sets it), got {shown(value)}.")
        return value
    flag = f" (as {action.option_strings[0]} takes it)" if action.option_strings else ""
    if value is None and item is not None and item.default is None:  # the option left out
        return None
    if action.nargs == 0:
        return _switch(path, dotted, value, flag)
    if value is None:
        raise RecordError(f"{path}: {dotted}: expected a value{flag}, got null.")
    if isinstance(value, list) and item is not None and isinstance(item.default, tuple):  # a list of ids
        return tuple(recorded_text(path, f"{dotted}[{index}]", part, flag) for index, part in enumerate(value))
    if isinstance(value, (dict, list)):
        raise RecordError(f"{path}: {dotted}: expected one value{flag}, got {shown(value)}.")
    if action.choices is not None:
        if not isinstance(value, str) or value not in action.choices:
            choices = ", ".join(map(str, action.choices))
            raise RecordError(f"{path}: {dotted}: expected one of {choices}{flag}, got {shown(value)}.")
        return value
    if action.type is None:
        return recorded_text(path, dotted, value, flag)
    try:
        return action.type(value)
    except (argparse.ArgumentTypeError, ValueError, TypeError) as err:
        raise RecordError(f"{path}: {dotted}: {cut(str(err))}{flag}.") from None


def _switch(path, dotted: str, value, flag: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{path}: {dotted}: expected true or false{flag}, got {shown(value)}.")
    return value
