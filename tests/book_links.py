#!/usr/bin/env python3
"""Every relative link and anchor of the built book resolves.

    python3 tests/book_links.py target/book [README.md …]

Reads every HTML page mdBook wrote (the chapters, the print page, the table
of contents, the 404 page), and for each `href` and `src` that is not an
absolute URL checks that the file it names exists inside the book and, for
a `#fragment`, that the page it names has an element with that id. Nothing
is fetched: links to other sites are not followed. Each Markdown file
named after the book (the README, which links into the book's sources) is
checked too: every relative link names a file that exists. Exits 1 naming
every broken link, 0 when there is none.
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The ids a page defines, the links it makes, and its `<base href>`."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []
        self.base = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name" if tag == "a" else None):
            if key and attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "base":
            self.base = attrs.get("href")
            return
        for key in ("href", "src"):
            if attrs.get(key) is not None:
                self.links.append((tag, attrs[key]))


def external(link):
    parts = urlsplit(link)
    return bool(parts.scheme) or link.startswith("//")


def check(root):
    root = root.resolve()
    pages = {}
    for path in sorted(root.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path] = page
    broken = []
    for path, page in pages.items():
        # A page with `<base href="/">` (the 404 page) resolves from the root.
        here = root if page.base == "/" else path.parent
        for tag, link in page.links:
            if external(link) or link == "":
                continue
            parts = urlsplit(link)
            target = path if parts.path == "" else (here / unquote(parts.path)).resolve()
            if parts.path.endswith("/"):
                target = target / "index.html"
            where = f"{path.relative_to(root)}: <{tag}> {link}"
            if root not in target.parents and target != root:
                broken.append(f"{where}: leaves the book")
            elif not target.is_file():
                broken.append(f"{where}: no file {target.relative_to(root)}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: no id {parts.fragment!r} in {target.relative_to(root)}")
    return len(pages), broken


def check_markdown(path):
    """The relative links of a Markdown file that name no file."""
    broken = []
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        target = urlsplit(link).path
        if external(link) or not target:
            continue
        if not (path.parent / unquote(target)).exists():
            broken.append(f"{path}: {link}: no file {target}")
    return broken


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: book_links.py BOOK_DIR [MARKDOWN …]")
    root = Path(sys.argv[1])
    if not (root / "index.html").is_file():
        sys.exit(f"{root}: no index.html (build the book first: make docs)")
    count, broken = check(root)
    for markdown in sys.argv[2:]:
        broken += check_markdown(Path(markdown))
    for line in broken:
        print(line, file=sys.stderr)
    if broken:
        sys.exit(f"{len(broken)} broken link(s) in {count} pages of {root}")
    print(f"{count} pages, every relative link and anchor resolves")


if __name__ == "__main__":
    main()
