"""A strategy for tests that measures the first two candidates, then once more, and keeps what
its second round was told of each candidate's compile: (prepared, prepare_s) per candidate."""

from disttune.strategy import Round, register_strategy

NAME = "test_measures_the_first_two"
seen: list = []  # one list of (prepared, prepare_s) per next_round the strategy was asked


class MeasuresTheFirstTwo:
    def __init__(self, warmup_runs, timed_runs, statistic):
        pass

    def first_round(self, count):
        return Round([0, 1], 0, 1)

    def next_round(self, standings):
        seen.append([(s.prepared, s.prepare_s) for s in standings])
        return Round([0, 1])


register_strategy(NAME, MeasuresTheFirstTwo)
