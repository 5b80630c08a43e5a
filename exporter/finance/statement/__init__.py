"""The HTML statement: its figures, its page template and its SVG charts."""
