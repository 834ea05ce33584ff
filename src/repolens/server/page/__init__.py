"""The search page of ``repolens serve --http``: what the agents see, in a browser.

A person searches the served repositories as an agent does and reads the
same packet (:mod:`repolens.server.page.app`: routes, login, security
headers), coloured and linked (:mod:`~repolens.server.page.view`,
:mod:`~repolens.server.page.highlight`), with ``explain`` drawn
(:mod:`~repolens.server.page.explain`) and each index's health
(:mod:`~repolens.server.page.health`). Server-rendered Jinja2 templates
and one small script, all served by the package: no build step, nothing
fetched from elsewhere at run time. ``[serve] page = false`` turns it off.
"""
