"""The workflows family's four sales apps (and the task desk) as web apps a person or a browser agent operates.

Each app is served on its own origin over the same run as the tools (``run.py``): pages read through the
replicas' read tools, forms write through their write tools, so both modalities share one state, one event log
and one verifier. ``server.py`` serves them (one app per origin, or all five by host name), ``views/`` holds
each app's pages, ``page.py`` the page model and its rendering, ``variants.py`` the appearance variants.
Needs the ``ui`` extra (jinja2, starlette, uvicorn). ``README.md`` lists the files.
"""
