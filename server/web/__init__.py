"""The browser's pages and the HTML view model (templates in ``web/templates``)."""
