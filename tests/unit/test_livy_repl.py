"""The Livy stand-in's Python REPL follows the rules of Livy's own (fake_shell.py): the last statement's repr and what
was printed, as text/plain only; %json, %table and %matplot; errors with the user's frames only."""
import base64

import pandas as pd
import pytest

from perfkit.lab.livy_repl import TABLE, Repl


@pytest.fixture
def repl():
    return Repl()


def test_the_last_expression_comes_back_as_its_repr_after_what_was_printed(repl):
    assert repl.execute("1 + 1") == {"status": "ok", "data": {"text/plain": "2"}}
    assert repl.execute("x = 3\nprint('hi')\nx * 2") == {"status": "ok", "data": {"text/plain": "hi\n6"}}
    assert repl.execute("x") == {"status": "ok", "data": {"text/plain": "3"}}  # one namespace for the session
    assert repl.execute("y = x") == {"status": "ok", "data": {"text/plain": ""}}


def test_stdout_then_stderr_right_stripped(repl):
    reply = repl.execute("import sys\nsys.stderr.write('warned\\n')\nprint('said')\n")
    assert reply["data"] == {"text/plain": "said\nwarned"}


def test_no_ipython_rich_output_only_text(repl):
    """A pandas frame, the last expression of a cell, comes back as its text, never HTML: fake_shell has no display
    machinery (what a perfkit report's tables would be on EMR's PySpark kernel)."""
    repl.namespace["frame"] = pd.DataFrame({"engine": ["spark"], "s3_s": [1.25]})
    reply = repl.execute("frame")
    assert reply["data"] == {"text/plain": repr(repl.namespace["frame"])}
    reply = repl.execute("from IPython.display import display\ndisplay(frame)")
    assert list(reply["data"]) == ["text/plain"]


def test_an_error_is_named_with_the_users_frames_only(repl):
    reply = repl.execute("def f():\n    return 1 / 0\nf()")
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "ZeroDivisionError", "division by zero")
    trace = "".join(reply["traceback"])
    assert trace.startswith("Traceback (most recent call last):")
    assert 'File "<stdin>", line 3, in <module>' not in trace  # the <module> frame goes, as in Livy's
    assert 'File "<stdin>", line 2, in f' in trace and "livy_repl.py" not in trace


def test_a_syntax_error_has_no_frames(repl):
    reply = repl.execute("def (:")
    assert reply["status"] == "error" and reply["ename"] == "SyntaxError"
    assert not any("livy_repl" in line for line in reply["traceback"])


def test_json_magic_alone_and_after_code(repl):
    assert repl.execute("d = {'a': 1}\n%json d") == {"status": "ok", "data": {"application/json": {"a": 1}}}
    reply = repl.execute("print('x')\n%json d")
    assert reply["data"] == {"application/json": {"a": 1}, "text/plain": "x"}


def test_table_magic_types_each_column_and_refuses_mixed_ones(repl):
    repl.execute("rows = [{'n': 1, 'name': 'a'}, {'n': None, 'name': 'b'}]")
    table = repl.execute("%table rows")["data"][TABLE]
    assert table == {"headers": [{"name": "n", "type": "INT_TYPE"}, {"name": "name", "type": "STRING_TYPE"}],
                     "data": [[1, "a"], [None, "b"]]}
    repl.execute("rows = [[1], ['one']]")
    reply = repl.execute("%table rows")
    assert (reply["status"], reply["evalue"]) == ("error", "table rows have different types")


def test_matplot_magic_sends_the_figure_as_png_and_nothing_else(repl):
    repl.execute("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])")
    data = repl.execute("%matplot plt")["data"]
    assert list(data) == ["image/png"] and base64.b64decode(data["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert repl.execute("plt.show()")["data"] == {"text/plain": ""}  # plt.show() alone shows nothing


def test_unknown_magics_and_missing_names_are_errors(repl):
    reply = repl.execute("%display df")
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "UnknownMagic",
                                                                  "unknown magic command 'display'")
    reply = repl.execute("%json nothing")
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "KeyError", "'nothing'")


def test_a_cancel_after_the_statement_is_taken_stops_it_and_one_between_statements_is_dropped(repl):
    """The server interrupts only once the REPL said it took a statement; the SIGINT may still come before the code
    begins (a loaded machine), and must stop it rather than fall between statements."""
    repl.take()
    repl.interrupt()  # before the code began
    reply = repl.execute("ran = True")
    assert (reply["status"], reply["ename"]) == ("error", "KeyboardInterrupt") and "ran" not in repl.namespace
    repl.interrupt()  # between statements: nothing to stop, and nothing kept for the next one
    repl.take()
    assert repl.execute("ran = True\nran") == {"status": "ok", "data": {"text/plain": "True"}}
