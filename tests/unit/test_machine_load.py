"""The CPU context printed beside make report's and make test's times: busy and stolen shares from /proc/stat."""
import pytest

from perfkit import machine_load


def _stat(tmp_path, name, user, nice, system, idle, iowait, irq, softirq, steal, guest=0, guest_nice=0):
    path = tmp_path / name
    path.write_text(f"cpu  {user} {nice} {system} {idle} {iowait} {irq} {softirq} {steal} {guest} {guest_nice}\n"
                    "cpu0 1 2 3 4 5 6 7 8 0 0\nintr 123\n")
    return str(path)


def test_busy_and_stolen_are_shares_of_every_cores_time_between_two_snapshots(tmp_path):
    before = machine_load.snapshot(_stat(tmp_path, "a", 1000, 10, 200, 5000, 30, 0, 5, 40, guest=7))
    after = machine_load.snapshot(_stat(tmp_path, "b", 1700, 10, 300, 5100, 50, 0, 15, 90, guest=57))
    before["at"], after["at"] = 100.0, 110.0
    load = machine_load.load_between(before, after)
    # ticks spent: user 700, system 100, idle 100, iowait 20, softirq 10, steal 50 (guest's 50 are inside user)
    total = 700 + 100 + 100 + 20 + 10 + 50
    assert load.busy == pytest.approx((700 + 100 + 10) / total)
    assert load.stolen == pytest.approx(50 / total)
    assert load.seconds == 10.0
    assert load.sentence().startswith(f"CPU over those 10 s: {load.cores} cores 83% busy, 5.1% taken by the host")


def test_no_time_between_the_snapshots_is_nothing_busy_not_a_division_by_zero(tmp_path):
    same = machine_load.snapshot(_stat(tmp_path, "a", 1, 1, 1, 1, 1, 1, 1, 1))
    assert machine_load.load_between(same, same).busy == 0.0


def test_the_reference_work_is_timed():
    assert 0 < machine_load.reference_seconds(10_000) < 5


def test_since_without_a_start_names_the_file_and_the_fix(tmp_path, capsys):
    missing = tmp_path / "nothing"
    assert machine_load.main(["since", str(missing)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and f"python -m perfkit.machine_load start {missing}" in err


def test_start_then_since_prints_one_line(tmp_path, capsys):
    kept = tmp_path / "cpu"
    assert machine_load.main(["start", str(kept)]) == 0
    assert machine_load.main(["since", str(kept)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("CPU over those ") and "taken by the host (steal)" in line and line.endswith(" s")
    assert machine_load.main(["sideways"]) == 2


def test_start_where_there_is_no_proc_stat_leaves_the_line_out_and_fails_nothing(tmp_path, monkeypatch, capsys):
    def unreadable(stat="/proc/stat"):
        raise FileNotFoundError(2, "No such file or directory", stat)

    monkeypatch.setattr(machine_load, "snapshot", unreadable)
    kept = tmp_path / "cpu"
    assert machine_load.main(["start", str(kept)]) == 0
    assert not kept.exists()
    err = capsys.readouterr().err
    assert "the CPU line is left out" in err and "/proc/stat" in err
