"""What the suite prints for a person to read (timings, the slowest cells), even while pytest captures output."""


def show_to_person(request, lines: list[str]) -> None:
    """Print `lines` past pytest's capture; `request` is the calling test's or fixture's."""
    text = "\n".join(lines)
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is None:
        print(text)
        return
    with capture.global_and_fixture_disabled():
        print("\n" + text, flush=True)
