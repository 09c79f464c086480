"""Form validation a user would see: when a submit is blocked because a field is invalid
(a required field left empty, a malformed e-mail), Chromium fires ``invalid`` on the field
and shows a bubble, but the DOM does not change. A listener installed in every document
keeps those messages, and the action that triggered them reports them in its note."""

from __future__ import annotations

# Installed with context.add_init_script: runs in every document before its own scripts.
LISTENER_JS = """
(() => {
  window.__webagentInvalid = [];
  document.addEventListener('invalid', (event) => {
    const el = event.target;
    const label = ((el.labels && el.labels.length ? el.labels[0].innerText : '') || el.getAttribute('aria-label')
                   || el.name || el.id || el.tagName.toLowerCase()).trim();
    window.__webagentInvalid.push(label + ': ' + el.validationMessage);
  }, true);
})();
"""
_TAKE_JS = "() => { const m = window.__webagentInvalid || []; window.__webagentInvalid = []; return m.slice(0, 5); }"


async def take_invalid_fields(page) -> list[str]:
    """The validation messages since the last call (``label: message``), at most five."""
    try:
        found = await page.evaluate(_TAKE_JS)
    except Exception:  # noqa: BLE001 - a page that navigated or closed has none to report
        return []
    return [str(m) for m in found or []]
