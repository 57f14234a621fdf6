"""Pushing a built folder to the Hugging Face Hub, as one commit that adds the build's files
and deletes only the files an earlier push of a build put there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from builder.publish.layout import is_output_file

__all__ = ["HubError", "push_to_hub"]


class HubError(Exception):
    """Pushing to the Hub failed; the message names the repository and the reason."""


def push_to_hub(
    output: Path, files: Sequence[Path], repo_id: str, private: bool = False, revision: str | None = None
) -> str:
    """Upload exactly ``files`` (from :func:`published_files`) as one commit to a dataset repository.

    Parquet files of the pushed configs that the repository holds from an earlier push and
    that this build no longer lists are deleted in the same commit. Returns the commit URL.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError

    if constants.is_offline_mode():
        raise HubError(f"{repo_id}: the Hub is not reachable in offline mode (HF_HUB_OFFLINE is set)")
    # the base error of the HTTP client huggingface_hub uses, for connection failures before any response
    client_errors = (OSError, ValueError, *HfHubHTTPError.__bases__)
    api = HfApi()
    wanted = [file.as_posix() for file in files]
    configs = {file.parts[0] for file in files if len(file.parts) > 1}
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision:
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        present = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
        stale = [
            path
            for path in present
            if path not in wanted and is_output_file(path.rsplit("/", 1)[-1]) and path.split("/", 1)[0] in configs
        ]
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(output / path)) for path in wanted]
        operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=f"Wikipedia-IPC build: {', '.join(sorted(configs))}",
            repo_type="dataset",
            revision=revision,
        )
    except client_errors as error:
        raise HubError(f"{repo_id}: pushing to the Hub failed ({error})") from None
    return commit.commit_url
