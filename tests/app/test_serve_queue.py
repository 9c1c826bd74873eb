"""The server's fair queue keeps its tasks indexed by key: a replaced or cancelled task is
found without a scan, and nothing is lost or answered twice whatever the order of puts,
replacements, cancels, gets and the close."""

from __future__ import annotations

import random
from concurrent.futures import Future

from damii_app.serve.jobs import FairQueue, _Task


def task(key: str, share: str, group: str, light: bool = False, heavy: bool = False) -> _Task:
    return _Task(Future(), abs, 0, key, share, heavy and not light, group, light)


def test_replace_drops_only_the_queued_task_of_the_same_key() -> None:
    queue = FairQueue(heavy_slots=1)
    a1, b1 = task("game-a:w", "s1", "g1"), task("game-b:w", "s1", "g1")
    queue.put(a1)
    queue.put(b1)
    a2 = task("game-a:w", "s1", "g1")
    assert queue.put(a2, replace=True) == [a1]
    assert len(queue) == 2
    assert {queue.get(), queue.get()} == {b1, a2}
    assert len(queue) == 0


def test_put_without_replace_keeps_both_tasks_of_a_key_and_cancel_takes_both() -> None:
    queue = FairQueue(heavy_slots=1)
    first, second = task("game-a:w", "s1", "g1"), task("game-a:w", "s2", "g2")
    other = task("game-ab:w", "s3", "g3")
    for t in (first, second, other):
        assert queue.put(t) == []
    # a prefix names every key that starts with it, in the order they were queued
    assert queue.cancel("game-a:") == [first, second]
    assert queue.cancel("game-a") == [other]
    assert len(queue) == 0 and queue._keyed == {} and queue._groups == {}


def test_a_light_only_worker_sees_no_light_task_without_a_scan() -> None:
    queue = FairQueue(heavy_slots=1)
    for i in range(1000):
        queue.put(task(f"g{i}:w", f"s{i}", f"10.0.{i // 250}.{i % 250}", heavy=True))
    assert queue._pick(light_only=True) is None
    light = task("light:w", "s", "10.9.9.9", light=True)
    queue.put(light)
    assert queue.get(light_only=True) is light
    heavy = queue.get()
    assert heavy.heavy
    # the only heavy slot is taken and only heavy tasks wait: nothing to pick
    assert queue._pick(light_only=False) is None and queue._pick(False, capped=False) is None
    queue.done(heavy)
    assert queue.get().heavy


def test_random_operations_lose_nothing_and_answer_nothing_twice() -> None:
    rng = random.Random(5)
    queue = FairQueue(heavy_slots=1, group_slots=1)
    queued: list[_Task] = []  # what the test believes is queued, in no particular order
    taken: list[_Task] = []
    gone: list[_Task] = []  # every task out of the queue: taken, replaced, cancelled, closed
    for _ in range(3000):
        op = rng.random()
        if op < 0.55:
            t = task(f"game{rng.randrange(40)}:{rng.choice('wb')}", f"s{rng.randrange(12)}",
                     f"g{rng.randrange(4)}", light=rng.random() < 0.2,
                     heavy=rng.random() < 0.4)
            dropped = queue.put(t, replace=rng.random() < 0.7)
            for old in dropped:
                assert old.key == t.key and old in queued
                queued.remove(old)
            gone += dropped
            queued.append(t)
        elif op < 0.65:
            prefix = f"game{rng.randrange(40)}"
            cancelled = queue.cancel(prefix)
            assert sorted(map(id, cancelled)) == sorted(
                id(t) for t in queued if t.key.startswith(prefix))
            for t in cancelled:
                queued.remove(t)
            gone += cancelled
        elif op < 0.9 and queued:
            picked = queue._pick(light_only=rng.random() < 0.3) or \
                queue._pick(light_only=False, capped=False)
            if picked is not None:
                queued.remove(picked)
                taken.append(picked)
                gone.append(picked)
        elif taken:
            queue.done(taken.pop(rng.randrange(len(taken))))
        assert len(queue) == len(queued)
        assert queue._light == sum(t.light for t in queued)
        assert queue._plain == sum(not (t.light or t.heavy) for t in queued)
        assert sum(len(v) for v in queue._keyed.values()) == len(queued)
    closed = queue.close()
    assert sorted(map(id, closed)) == sorted(map(id, queued))
    gone += closed
    assert len({id(t) for t in gone}) == len(gone)  # nothing out of the queue twice
    assert queue.get() is None and len(queue) == 0
