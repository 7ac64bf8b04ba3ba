"""perfkit.report.outline: what an executed notebook shows, as two runs of it are compared (the EMR parity test)."""
import nbformat
import pandas as pd

from perfkit.findings import Findings
from perfkit.report.outline import Outline, outline, subject, table_columns


def _executed(*outputs_per_cell):
    cells = []
    for outputs in outputs_per_cell:
        cell = nbformat.v4.new_code_cell("...")
        cell.outputs = [nbformat.v4.new_output(**o) for o in outputs]
        cells.append(cell)
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# title"), *cells])


def test_a_sentence_is_known_by_its_first_two_words_without_its_digits():
    assert subject("Spark 3.5.6 (yarn): S3 slower than HDFS on 2 of 4 queries") == "Spark #.#.#"
    assert subject("Copying to HDFS pays off after 4 runs") == subject("Copying to HDFS never pays off") == "Copying to"


def test_the_columns_of_a_pandas_table_and_not_its_index_name_row():
    frame = pd.DataFrame({"HDFS median (s)": [1.0], "verdict": ["x & y"]},
                         index=pd.Index(["q1"], name="query"))
    assert table_columns(frame.to_html()) == [("HDFS median (s)", "verdict")]
    assert table_columns("<p>no table</p>") == []


def test_outline_of_an_executed_notebook():
    findings = Findings(["Trino 476: no difference on 4 of 4 queries.", "A month of keeping 17 MB costs 0.1 USD."])
    bundle = findings._repr_mimebundle_()
    table = pd.DataFrame({"a": [1], "b": [2]}).to_html()
    nb = _executed(
        [{"output_type": "execute_result", "data": bundle, "execution_count": 1}],
        [{"output_type": "display_data", "data": {"text/html": table, "text/plain": "t"}},
         {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}},
         {"output_type": "stream", "name": "stdout", "text": "Prices: list\n"}],
        [{"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}])
    assert outline(nb) == Outline(findings=("Trino ###:", "A month"), tables=(("a", "b"),), plots=1,
                                  errors=("ValueError: bad",))


def test_a_report_that_lost_its_rich_outputs_has_another_outline():
    # what sparkmagic's kernel returns for the same cells: text/plain only
    rich = _executed([{"output_type": "execute_result", "execution_count": 1,
                       "data": Findings(["Hive 4.0.1: no difference."])._repr_mimebundle_()}])
    plain = _executed([{"output_type": "stream", "name": "stdout", "text": "Hive 4.0.1: no difference.\n"}])
    assert outline(rich) != outline(plain) and outline(plain).findings == ()
