"""Markers of the package's test suite (all of them run by default, as CI runs them)."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "stop_sweep: every long call stopped by SIGINT at several delays in a child process "
        "(about 40 s); run alone with -m stop_sweep",
    )
