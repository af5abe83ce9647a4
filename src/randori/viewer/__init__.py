"""The web viewer over a results store (`randori view`) and the templates the HTML report shares.

Importing this package is cheap: the web framework is imported only by `randori.viewer.app`."""
