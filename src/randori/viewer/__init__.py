"""The web viewer over a results store (`randori view`); its pages include the HTML report's stylesheet.

Importing this package is cheap: the web framework is imported only by `randori.viewer.app`."""
