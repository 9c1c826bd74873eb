"""The worker processes of a match: results, errors and dead workers, never a hang."""

from __future__ import annotations

import os
import signal

import pytest

from damii_agents.process_pool import WorkerDied, WorkerPool, unordered_map
from damii_env.errors import IllegalMoveError


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise IllegalMoveError("three is not legal here")
    return x


def die_on_two(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def bad_setup() -> None:
    raise ValueError("no players")


def test_every_result_comes_back_once():
    assert sorted(unordered_map(square, range(10), workers=2)) == [x * x for x in range(10)]


def test_more_workers_than_tasks_and_no_tasks():
    assert list(unordered_map(square, [7], workers=4)) == [49]
    assert list(unordered_map(square, [], workers=2)) == []


def test_an_error_in_a_worker_is_raised_with_its_type():
    with pytest.raises(IllegalMoveError, match="three is not legal"):
        list(unordered_map(fail_on_three, range(6), workers=2))


def test_an_error_in_the_setup_is_raised():
    with pytest.raises(ValueError, match="no players"):
        list(unordered_map(square, range(4), workers=2, initializer=bad_setup))


def test_a_killed_worker_is_reported_not_waited_for():
    """multiprocessing.Pool waits forever for the task of a killed worker."""
    with pytest.raises(WorkerDied, match="exit code -9"):
        list(unordered_map(die_on_two, range(4), workers=2))


def test_leaving_early_ends_the_workers():
    results = unordered_map(square, range(50), workers=2)
    assert next(results) >= 0
    results.close()  # the generator's finally: every worker ended
    import multiprocessing as mp

    assert [p for p in mp.active_children() if p.is_alive()] == []


def pid_of(_: int) -> int:
    return os.getpid()


def test_a_pool_keeps_its_workers_from_map_to_map():
    """What the workers set up (a review's players and tables) serves every map."""
    with WorkerPool(2) as pool:
        first = set(pool.imap_unordered(pid_of, range(8)))
        second = set(pool.imap_unordered(pid_of, range(8)))
        assert sorted(pool.imap_unordered(square, range(5))) == [0, 1, 4, 9, 16]
    assert 1 <= len(first) <= 2 and second <= first
    assert os.getpid() not in first


def test_a_kept_pool_reports_a_killed_worker_and_then_refuses_work():
    with WorkerPool(2) as pool:
        assert sorted(pool.imap_unordered(square, range(3))) == [0, 1, 4]
        with pytest.raises(WorkerDied, match="exit code -9"):
            list(pool.imap_unordered(die_on_two, range(4)))
        with pytest.raises(RuntimeError, match="worker pool is closed"):
            list(pool.imap_unordered(square, range(3)))


def test_leaving_a_kept_pool_s_map_early_ends_its_workers():
    import multiprocessing as mp

    with WorkerPool(2) as pool:
        results = pool.imap_unordered(square, range(50))
        assert next(results) >= 0
        results.close()
        assert [p for p in mp.active_children() if p.is_alive()] == []
        with pytest.raises(RuntimeError, match="worker pool is closed"):
            next(pool.imap_unordered(square, range(2)))
