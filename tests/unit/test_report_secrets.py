"""Secrets: refused in parameters at any depth, redacted from everything a report writes."""
import hashlib
import json

import nbformat
import pytest

from perfkit import report
from perfkit.errors import PerfkitError

# built at run time: no secret-shaped literal in the repository
FAKE_KEY_ID = "ASIA" + "QRSTUVWXYZ234567"
FAKE_SECRET = "Zx9/" + "aB3+" * 8 + "Qw7r"  # 40 characters mixing cases, digits, / and +
FAKE_PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow" + "IBAAKCAQEA\nabc\n-----END RSA " + "PRIVATE KEY-----"
GIT_COMMIT = hashlib.sha1(b"a commit").hexdigest()  # 40 lowercase hex: a git id, not a secret
SHA256 = hashlib.sha256(b"a file").hexdigest()
assert len(FAKE_SECRET) == 40


@pytest.mark.parametrize("params, where", [
    ({"volume_ids": FAKE_SECRET}, "volume_ids"),  # top level
    ({"volume_ids": ["vol-0a1b2c3d", FAKE_SECRET]}, r"volume_ids\[1\]"),  # in a list
    ({"pair": ("x", FAKE_KEY_ID)}, r"pair\[1\]"),  # in a tuple
    ({"options": {"region": "us-east-1", "key": FAKE_SECRET}}, "options.key"),  # a dict value
    ({"options": {"s3": {"aws_secret_access_key": "short"}}}, "options.s3.aws_secret_access_key"),  # a dict key's name
    ({"options": {FAKE_SECRET: 1}}, "options."),  # a dict key of secret shape
    ({"deep": [{"a": [["ok", {"b": FAKE_PEM}]]}]}, r"deep\[0\].a\[0\]\[1\].b"),  # nested
])
def test_secrets_are_refused_at_every_level(params, where):
    with pytest.raises(PerfkitError, match=f"parameter '{where}.*looks like a secret"):
        report.check_parameters(params)


def test_git_ids_and_digests_are_not_secrets():
    report.check_parameters({"commit": GIT_COMMIT, "digests": [SHA256, GIT_COMMIT.upper()], "n": {"rows": 3}})


def test_redact_removes_every_secret_shape_and_keeps_hashes(monkeypatch):
    known = "s3cr3t-from-the-environment"
    monkeypatch.setenv("AWS_SESSION_TOKEN", known)
    text = (f"id={FAKE_KEY_ID}\nsecret: {FAKE_SECRET}\n'{FAKE_SECRET}',\n{FAKE_PEM}\ntoken {known}\n"
            f"git_commit {GIT_COMMIT}\nsha256 {SHA256}\n")
    out = report.redact(text)
    for secret in (FAKE_KEY_ID, FAKE_SECRET, "MIIEow", "PRIVATE KEY", known):
        assert secret not in out
    assert GIT_COMMIT in out and SHA256 in out
    assert out.count(report.REDACTED) == 5


def test_redact_leaves_embedded_images_whole():
    blob = "iVBOR" + "w0KGgo" * 5 + "Ab3yz"  # 40 base64 characters, mixed: secret-shaped, but an image
    page = f'<img src="data:image/png;base64,{blob}"> {FAKE_SECRET}'
    assert report.redact(page) == f'<img src="data:image/png;base64,{blob}"> ***'


def test_short_environment_values_are_not_replaced_everywhere(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")  # a placeholder, as moto and local stacks use
    assert report.redact("the test ran") == "the test ran"


def test_a_notebook_is_redacted_string_by_string():
    nb = nbformat.v4.new_notebook(metadata={"perfkit": {"git_commit": GIT_COMMIT, "parameters": {"x": [FAKE_KEY_ID]}}})
    # after another line: in the serialised JSON the secret would follow "\\n" and escape a text-level pattern
    out = nbformat.v4.new_output("stream", name="stdout", text=f"first line\n{FAKE_SECRET}\n")
    png = "iVBOR" + "w0KGgo" * 5 + "Ab3yz"
    image = nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})
    nb.cells = [nbformat.v4.new_code_cell("x = 1", outputs=[out, image])]
    text = nbformat.writes(report.redact_notebook(nb))
    assert FAKE_SECRET not in text and FAKE_KEY_ID not in text
    assert GIT_COMMIT in text and png in text
    assert nbformat.reads(text, as_version=4).cells[0].outputs[0].text == "first line\n***\n"


def test_index_redacts_parameters(tmp_path):
    folder = tmp_path / "st1"
    folder.mkdir()
    meta = {"papermill": {"parameters": {"volume_ids": [FAKE_SECRET], "commit": GIT_COMMIT}},
            "perfkit": {"rendered_at": "2026-01-01T00:00:00", "ok": True}}
    (folder / "a.ipynb").write_text(json.dumps({"cells": [], "metadata": meta}))
    (folder / "a.html").write_text("<html></html>")
    page = report.write_index(tmp_path).read_text()
    assert FAKE_SECRET not in page and "volume_ids=[&#x27;***&#x27;]" in page and GIT_COMMIT in page


def test_the_cli_refuses_a_secret_inside_a_list_parameter():
    from click.testing import CliRunner

    from perfkit.cli import main

    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb", "-p", "run_testdfsio=false",
                                       "-p", f"volume_ids=[{FAKE_SECRET}]"])
    assert result.exit_code == 1 and "'volume_ids[0]' looks like a secret" in result.output
