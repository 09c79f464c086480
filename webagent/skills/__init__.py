"""Skills: reusable pieces of a task, learned from recordings (a person's demonstration with
``webagent teach``, or a finished run), never written by hand.

``model`` (what a skill holds), ``learn`` (cutting a recording into skills at form and page
boundaries; agreeing skills merged), ``store`` (per site under ``$WEBAGENT_HOME/skills``:
list, show, remove, export, import), ``cli`` (``webagent skills ...``)."""
