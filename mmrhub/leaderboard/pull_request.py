"""An uploaded run's result proposed to the Space: a pull request adding its one file under ``results/``, made with
the user's own Hub login (gradio's OAuth token), as results repositories such as MTEB's grow."""

import os

from huggingface_hub import CommitOperationAdd
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError

from mmrhub.export.push import connection_errors
from mmrhub.leaderboard.board import RESULTS
from mmrhub.leaderboard.results import file_name
from mmrhub.leaderboard.results import result_json


def space_id() -> str:
    """The Space this board runs as (``SPACE_ID``, which the Hub sets), or '' when it runs elsewhere."""
    return os.environ.get("SPACE_ID", "")


def description(data: dict) -> str:
    """The pull request's text: the run, its scores and how to check them."""
    table = ", ".join(f"{name} {100 * value:.2f}" for name, value in data["table"].items() if isinstance(value, float))
    run = data["run"]
    return (
        f"Adds `{RESULTS}/{file_name(data['name'])}`: the run {run['file']} ({run['format']}, sha256 "
        f"{run.get('sha256')}) scored by this Space ({data['scored_by']}): {table}.\n\n"
        "Merging it adds the row to the board. To check the numbers, score the run with `mmrhub evaluate` against "
        "the board's judgments."
    )


def open_pull_request(data: dict, repo_id: str, token: str) -> str:
    """Open the pull request on ``repo_id`` (a Space) with ``token``; its URL. The Hub's refusal or an unreachable
    Hub is one line."""
    path = f"{RESULTS}/{file_name(data['name'])}"
    api = HfApi(token=token)
    try:
        info = api.create_commit(
            repo_id=repo_id,
            repo_type="space",
            operations=[CommitOperationAdd(path_in_repo=path, path_or_fileobj=result_json(data))],
            commit_message=f"Add {data['name']} to the board",
            commit_description=description(data),
            create_pr=True,
        )
    except HfHubHTTPError as err:
        status = getattr(err.response, "status_code", "")
        raise PermissionError(
            f"the Hub refused the pull request to {repo_id} ({status}): {str(err).splitlines()[0]}"
        ) from None
    except (OSError, *connection_errors()) as err:  # no connection, refused, timed out, offline mode
        raise ConnectionError(f"cannot reach the Hub to open the pull request to {repo_id}: {err}") from None
    return info.pr_url
