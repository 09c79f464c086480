"""Seconds as a person reads them in progress lines ("40 s", "1 min 40 s"): the time left of a
document's reading (``docqa.progress``) and of an evaluation on Ray (``cluster``)."""


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
