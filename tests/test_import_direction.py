"""Imports point one way: cli -> commands -> benchmarks -> wings (scoring, export, report, retrieve, mteb,
leaderboard) -> the declaration (``mmrhub/declaration.py``, the shapes every wing types against) -> builders and
metric folders; a wing reaches a builder only through the declaration it is given; and no file of the tests imports
a test module. Read from the source with ``ast``, so a lazy import inside a function counts too."""

import ast
from pathlib import Path

import pytest
from _paths import ROOT

PACKAGE = ROOT / "mmrhub"
TESTS = ROOT / "tests"
WINGS = ("scoring", "export", "report", "retrieve", "mteb", "leaderboard")
# The builders and the modules that are theirs alone: a wing reaches a builder through the declaration it is given
# (``Benchmark.builder``), never by name; the low modules they share with mmrhub (mmr_inputs, mmr_cache, mmr_remote)
# are not in this list.
BUILDER_MODULES = ("mipr", "m2kr", "mipr_format", "m2kr_format", "m2kr_archive", "mmr_builder")
# The mteb wing's door offers each registered benchmark's task class by its task's name: it alone reads the registry.
REGISTRY_READERS = {"mteb/__init__.py": ["mmrhub.benchmarks", "mmrhub.benchmarks.BENCHMARKS"]}


def imported_modules(path: Path) -> set:
    """Every absolute module name a file imports, at any depth."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules_under(folder: str) -> list:
    return sorted((PACKAGE / folder).rglob("*.py"))


def reaches(path: Path, package: str) -> list:
    return sorted(name for name in imported_modules(path) if name == package or name.startswith(package + "."))


def test_only_the_cli_imports_the_commands():
    offenders = {
        str(path.relative_to(PACKAGE)): reaches(path, "mmrhub.commands")
        for path in PACKAGE.rglob("*.py")
        if path.parent.name != "commands" and path.name != "cli.py" and reaches(path, "mmrhub.commands")
    }
    assert offenders == {}


@pytest.mark.parametrize("wing", WINGS)
def test_wings_import_neither_commands_nor_benchmarks(wing):
    """Only the mteb wing's door reads the benchmarks' registry (and no benchmark module by name)."""
    offenders = {}
    for path in modules_under(wing):
        relative = str(path.relative_to(PACKAGE))
        benchmarks = reaches(path, "mmrhub.benchmarks")
        if benchmarks == REGISTRY_READERS.get(relative):
            benchmarks = []
        offenders[relative] = reaches(path, "mmrhub.commands") + benchmarks
    assert {path: names for path, names in offenders.items() if names} == {}


@pytest.mark.parametrize("wing", WINGS)
def test_wings_import_no_builder_module(wing):
    """The MTEB task's name and citation, like the card's, come through ``Benchmark.builder``: no wing imports a
    builder or its format modules by name."""
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in imported_modules(path) if name.split(".")[0] in BUILDER_MODULES
        )
        for path in modules_under(wing)
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_leaderboard_space_s_app_is_an_entry_point_of_its_own():
    """``leaderboard_app.py`` (a board's app.py) stands where cli.py stands: it names the benchmarks and builds the
    page from the wing, and nothing imports it."""
    app = PACKAGE / "leaderboard_app.py"
    assert {name.split(".")[1] for name in reaches(app, "mmrhub")} == {"benchmarks", "leaderboard"}
    assert [
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if reaches(path, "mmrhub.leaderboard_app")
    ] == []


def test_benchmarks_import_no_command():
    assert [reaches(path, "mmrhub.commands") for path in modules_under("benchmarks")] == [
        [] for _ in modules_under("benchmarks")
    ]


def test_the_declaration_is_the_bottom_it_imports_no_wing_benchmark_or_command():
    """``declaration.py`` imports nothing of mmrhub but the bundled data's location, so every wing may import it."""
    declaration = PACKAGE / "declaration.py"
    assert [name for name in reaches(declaration, "mmrhub") if not name.startswith("mmrhub.data")] == []


@pytest.mark.parametrize("wing", WINGS)
def test_wings_type_the_benchmark_against_the_declaration(wing):
    """Every ``benchmark`` parameter or field of a wing is a ``Benchmark`` (never ``object`` or untyped), every
    ``view`` a ``View``, and the wing takes them from the declaration."""
    expected = {"benchmark": "Benchmark", "view": "View"}
    found, offenders = set(), {}
    for path in modules_under(wing):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                named = [(arg.arg, arg.annotation) for arg in node.args.args + node.args.kwonlyargs]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                named = [(node.target.id, node.annotation)]
            else:
                continue
            for name, annotation in named:
                if name in expected:
                    typed = ast.unparse(annotation) if annotation else None
                    found.add(path)
                    if typed != expected[name]:
                        offenders[f"{path.relative_to(PACKAGE)}:{node.lineno} {name}"] = typed
    assert offenders == {}
    assert all("mmrhub.declaration" in imported_modules(path) for path in found)


def test_no_wing_field_is_typed_object():
    offenders = []
    for wing in WINGS:
        for path in modules_under(wing):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.AnnAssign) and "object" in ast.unparse(node.annotation):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_builders_and_metric_folders_never_import_mmrhub():
    root = PACKAGE.parent
    # the builders with their top-level siblings (formats, archive, mmr_inputs, mmr_cache, mmr_builder)
    sources = [*sorted(root.glob("*.py")), *sorted((root / "metrics").rglob("*.py"))]
    assert {"mipr.py", "m2kr.py", "mmr_builder.py", "mmr_cache.py"} <= {path.name for path in sources}
    assert {str(path.relative_to(root)): reaches(path, "mmrhub") for path in sources if reaches(path, "mmrhub")} == {}


def test_comparisons_import_nothing_of_what_prints_them():
    """``scoring/output/`` shows comparisons (``compare/``): compare imports nothing of output, so the two are not
    tied both ways."""
    assert {
        str(path.relative_to(PACKAGE)): reaches(path, "mmrhub.scoring.output")
        for path in modules_under("scoring/compare")
        if reaches(path, "mmrhub.scoring.output")
    } == {}


def test_the_library_builds_no_model():
    """The tiny random checkpoints are built by scripts/tiny_models.py, for the tests and the scripts: no module of
    the package imports it."""
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if reaches(path, "tiny_models")]
    assert offenders == []


def test_the_reranker_shares_the_embedders_inputs_not_its_module():
    """What the embedder and the reranker hand their models alike is in ``retrieve/model_inputs.py``: the reranker
    imports nothing of ``encoders.py``."""
    assert {
        str(path.relative_to(PACKAGE)): reaches(path, "mmrhub.retrieve.encoders")
        for path in modules_under("retrieve/rerank")
        if reaches(path, "mmrhub.retrieve.encoders")
    } == {}


def test_the_records_import_no_wing_benchmark_or_command():
    """``records/`` (a run's record: provenance, the record file, differences, random weights) sits below the wings
    that write and read records: it imports none of them, no benchmark and no command."""
    above = [f"mmrhub.{part}" for part in (*WINGS, "benchmarks", "commands")]
    offenders = {
        str(path.relative_to(PACKAGE)): [name for package in above for name in reaches(path, package)]
        for path in modules_under("records")
    }
    assert set(offenders) >= {"records/meta.py", "records/provenance.py", "records/differences.py"}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_late_interaction_imports_nothing_of_the_single_vector_search():
    """``retrieve/late_interaction/`` (MaxSim, token vectors, PreFLMR) stands beside the single-vector encoders and
    their search, never on them: the pipeline chooses one of the two (``pipeline.search_for``)."""
    single = ("mmrhub.retrieve.encoders", "mmrhub.retrieve.single_vector")
    offenders = {
        str(path.relative_to(PACKAGE)): [name for package in single for name in reaches(path, package)]
        for path in modules_under("retrieve/late_interaction")
    }
    assert len(offenders) >= 10  # maxsim, tokens, search and PreFLMR's six
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_preflmr_modules_import_no_circle():
    """No two modules of PreFLMR import each other (a lazy import inside a function counts)."""
    folder = "retrieve/late_interaction/preflmr"
    names = {path: f"mmrhub.{folder.replace('/', '.')}.{path.stem}" for path in modules_under(folder)}
    imports = {names[path]: imported_modules(path) for path in names}
    circles = sorted((a, b) for a in imports for b in imports if a < b and b in imports[a] and a in imports[b])
    assert circles == []


def environment_reads(path: Path) -> list:
    """The names of environment variables a file reads (``os.environ[...]``, ``os.environ.get(...)``,
    ``os.getenv(...)``), at any depth."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        target = None
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            target = node.slice
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
            target = node.args[0]
        if isinstance(target, ast.Constant):
            names.append(target.value)
    return names


def test_commands_read_no_environment_and_the_rank_is_read_once():
    """commands/ stay argparse only: no command reads an environment variable; the launcher's RANK is read by
    ``distributed.Context.from_launcher`` alone."""
    assert {
        str(p.relative_to(PACKAGE)): environment_reads(p) for p in modules_under("commands") if environment_reads(p)
    } == {}
    readers = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if "RANK" in environment_reads(path)]
    assert readers == ["retrieve/distributed.py"]


def test_the_environment_check_sees_a_read(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('import os\n\n\ndef f():\n    return os.environ.get("RANK", "0"), os.environ["HOME"]\n')
    assert sorted(environment_reads(bad)) == ["HOME", "RANK"]


def test_the_direction_test_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from mmrhub.commands.arguments import scoring_request\n", encoding="utf-8")
    assert reaches(bad, "mmrhub.commands") == ["mmrhub.commands.arguments", "mmrhub.commands.arguments.scoring_request"]


def test_the_builder_check_sees_a_lazy_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import mipr\n    from m2kr import _CITATION\n", encoding="utf-8")
    assert sorted(name for name in imported_modules(bad) if name.split(".")[0] in BUILDER_MODULES) == [
        "m2kr",
        "m2kr._CITATION",
        "mipr",
    ]


def imported_test_modules(path: Path) -> list:
    """The test modules (``test_*`` files anywhere under tests/) that a file imports, at any depth."""
    test_modules = {test.stem for test in TESTS.rglob("test_*.py")}
    return sorted({name.split(".")[0] for name in imported_modules(path)} & test_modules)


def test_no_test_module_imports_another():
    """Shared names live in tests/helpers/, shared fixtures in a conftest.py: no file under tests/ imports a
    test module, whose module-level code (its skips, its settings) would then run for another file too."""
    offenders = {
        str(path.relative_to(TESTS)): imported_test_modules(path)
        for path in sorted(TESTS.rglob("*.py"))
        if imported_test_modules(path)
    }
    assert offenders == {}


def test_the_test_import_check_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import test_report\n\n\ndef f():\n    from test_mteb_layout import EXPECTED\n", encoding="utf-8")
    assert imported_test_modules(bad) == ["test_mteb_layout", "test_report"]


def test_shared_test_code_lives_in_the_helpers_folder():
    """Helpers (``_*.py``) lie in tests/helpers/ and nowhere else, and that folder holds no test; the other folders
    hold tests and their conftest.py only."""
    misplaced = [
        str(path.relative_to(TESTS))
        for path in sorted(TESTS.rglob("*.py"))
        if (path.parent.name == "helpers") != path.name.startswith("_")
        or not (path.name.startswith(("_", "test_")) or path.name == "conftest.py")
    ]
    assert misplaced == []
