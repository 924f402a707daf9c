"""Authoring kinds registered with a plugin (`@author`): their listing, the
three answers as the host gets them (JSON text in and out), the records'
builders, and a whole session run natively by `testing.AuthoringSession`."""

import json
import unittest
from dataclasses import dataclass, field
from typing import Any

from toolhost_sdk import Change, Ctx, Current, Entity, Failed, InvalidArguments, Plugin, Problem, Problems, backend
from toolhost_sdk.authoring import escape, pointer
from toolhost_sdk.testing import AuthoringSession, FakeHost


@dataclass
class Words:
    """A book's words, as `current` reads them."""

    book: int
    words: list[str] = field(default_factory=list)


@dataclass
class WriteWords:
    """The arguments of `write_words`: the normalized proposal."""

    book: int
    words: list[str]


def word_lists(p: Plugin | None = None) -> Plugin:
    """A plugin authoring `word_list`: a book's words, a proposal being a
    list of non-blank words; promoting writes them."""
    p = p or Plugin()
    p.entities("book")(lambda ctx, kind: [Entity(1, "b", ctx.tenant)])

    @p.tool(permission="words:write", description="Writes a book's words.")
    def write_words(book: int, words: list[str]) -> dict:
        backend.post("books", f"/books/{book}/words", words).ok()
        return {"written": len(words)}

    @p.author("word_list", subject_kind="book", promoted_by="write_words")
    class WordLists:
        """A book's words: propose {words: [...]}, each not blank."""

        def current(self, ctx: Ctx, subject: int) -> Current[Words]:
            words = backend.get("books", f"/books/{subject}").ok().json(list[str])
            return Current(f"v{len(words)}", Words(subject, [ctx.tenant, *words]))

        def validate(self, ctx: Ctx, current: Words, proposal: Any) -> WriteWords:
            words = proposal.get("words") if isinstance(proposal, dict) else None
            if not isinstance(words, list):
                raise Problems([Problem(pointer("words"), "expected a list of words")])
            if words == ["boom"]:
                raise InvalidArguments("boom is not a word")
            blank = [Problem(pointer("words", i), "blank") for i, w in enumerate(words) if not str(w).strip()]
            if blank:
                raise Problems(blank)
            return WriteWords(current.book, words)

        def diff(self, ctx: Ctx, current: Words, normalized: WriteWords) -> list[Change]:
            return [Change.added(w, w) for w in normalized.words if w not in current.words]

    return p


CURRENT = '{"book":7,"words":["a"]}'


class Kinds(unittest.TestCase):
    def test_a_plugin_without_authors_lists_none_and_refuses_every_kind_naming_it(self):
        p = Plugin()
        self.assertEqual(p.authoring_kinds(), [])
        with self.assertRaises(InvalidArguments) as e:
            p.current("test_plan", 1)
        self.assertEqual(e.exception.message, 'this plugin authors no kind "test_plan" (it authors [])')
        with self.assertRaises(Problems) as problems:
            p.validate("test_plan", "{}", "{}")
        self.assertEqual(problems.exception.problems[0].path, "")
        with self.assertRaises(InvalidArguments):
            p.diff("test_plan", "{}", "{}")

    def test_a_kind_lists_its_subject_kind_promoting_tool_and_docstring(self):
        (k,) = word_lists().authoring_kinds()
        self.assertEqual((k.name, k.subject_kind, k.promoted_by), ("word_list", "book", "write_words"))
        self.assertEqual(k.description, "A book's words: propose {words: [...]}, each not blank.")

    def test_a_promoting_tool_or_subject_kind_the_plugin_lacks_is_refused_at_listing(self):
        for promoted_by, subject_kind, message in [("nope", "book", "not one of this plugin's tools"), ("write_words", "page", "not an entity kind")]:
            p = word_lists()
            p.author("other", subject_kind=subject_kind, promoted_by=promoted_by, description="d")(_Empty)
            with self.assertRaisesRegex(ValueError, message):
                p.authoring_kinds()

    def test_a_kind_that_cannot_be_authored_is_refused_when_registered(self):
        class NoDiff:
            def current(self, ctx, subject): ...
            def validate(self, ctx, current, proposal): ...

        class NotCurrent(_Empty):
            def current(self, ctx: Ctx, subject: int) -> Words: ...

        p = word_lists()
        cases = {
            "registered twice": lambda: p.author("word_list", subject_kind="book", promoted_by="w", description="d")(_Empty),
            "a name is 1-64": lambda: p.author("Word List", subject_kind="book", promoted_by="w", description="d")(_Empty),
            "a subject kind is": lambda: p.author("w", subject_kind="", promoted_by="w", description="d")(_Empty),
            "promoted_by=": lambda: p.author("w", subject_kind="book", promoted_by="", description="d")(_Empty),
            "method diff": lambda: p.author("w", subject_kind="book", promoted_by="w", description="d")(NoDiff),
            "give a description": lambda: p.author("w", subject_kind="book", promoted_by="w")(_Empty),
            "must answer a Current": lambda: p.author("w", subject_kind="book", promoted_by="w", description="d")(NotCurrent),
        }
        for message, register in cases.items():
            with self.assertRaisesRegex((TypeError, ValueError), message):
                register()


class _Empty:
    def current(self, ctx, subject):
        return Current("v", {})

    def validate(self, ctx, current, proposal):
        return proposal

    def diff(self, ctx, current, normalized):
        return []


class Answers(unittest.TestCase):
    def test_current_serializes_the_body_and_keeps_the_version(self):
        with FakeHost(backend={"GET /books/7": ["a", "b"]}):
            state = word_lists().current("word_list", 7, Ctx(tenant="demo"))
        self.assertEqual((state.version, state.body), ("v2", '{"book":7,"words":["demo","a","b"]}'))

    def test_validate_answers_the_normalized_json_or_every_problem_at_its_pointer(self):
        cases = [
            ('{"words":["b"]}', '{"book":7,"words":["b"]}'),
            ('{"words":["b"," ",""]}', ["/words/1", "/words/2"]),
            ('{"words":3}', ["/words"]),
            ('{"words":["boom"]}', [""]),
            ("not json", [""]),
        ]
        for proposal, want in cases:
            try:
                got = word_lists().validate("word_list", CURRENT, proposal)
            except Problems as e:
                got = [p.path for p in e.problems]
            self.assertEqual(got, want, proposal)

    def test_a_current_state_of_another_shape_is_one_whole_proposal_problem(self):
        with self.assertRaises(Problems) as e:
            word_lists().validate("word_list", '{"lines":[]}', '{"words":[]}')
        (problem,) = e.exception.problems
        self.assertEqual(problem.path, "")
        self.assertIn("the current state does not parse", problem.message)

    def test_a_normalized_proposal_the_promoting_tool_does_not_take_is_a_plugin_bug(self):
        p = word_lists()
        p.tools["write_words"].arguments.fields.pop()  # now it takes only `book`
        with self.assertRaisesRegex(TypeError, "what 'write_words' does not take: unknown field \"words\""):
            p.validate("word_list", CURRENT, '{"words":["b"]}')

    def test_diff_converts_both_sides_to_the_authors_types_and_answers_its_changes(self):
        changes = word_lists().diff("word_list", CURRENT, {"book": 7, "words": ["a", "b"]})
        self.assertEqual(changes, [Change("added", "b", None, "b")])
        with self.assertRaisesRegex(InvalidArguments, "the normalized proposal does not parse"):
            word_lists().diff("word_list", CURRENT, '{"book":7}')
        with self.assertRaisesRegex(InvalidArguments, "the current state does not parse"):
            word_lists().diff("word_list", "{}", '{"book":7,"words":[]}')


class Records(unittest.TestCase):
    def test_change_builders_carry_json_values_on_the_sides_they_have(self):
        changed = Change.changed("Cart", Words(1, ["a"]), {"tags": ()})
        self.assertEqual((changed.op, changed.before, changed.after), ("changed", {"book": 1, "words": ["a"]}, {"tags": []}))
        self.assertEqual(Change.removed("Cart", 1), Change("removed", "Cart", 1, None))
        with self.assertRaises(TypeError):
            Change.added("Cart", float("nan"))
        with self.assertRaises(TypeError):
            Change.added("Cart", object())

    def test_pointers_escape_tilde_before_slash(self):
        self.assertEqual(escape("a/b~c"), "a~1b~0c")
        self.assertEqual(escape("~1"), "~01")
        self.assertEqual(pointer("tests", 3, "a/b"), "/tests/3/a~1b")
        self.assertEqual(pointer(), "")

    def test_problems_need_at_least_one_problem(self):
        with self.assertRaises(TypeError):
            Problems([])
        self.assertEqual(str(Problems([Problem.whole("no"), Problem("/a", "bad")])), "/: no; /a: bad")


class Session(unittest.TestCase):
    def host(self, words=("a",)):
        return FakeHost(backend={"GET /books/7": list(words), "POST /books/7/words": {}})

    def test_a_session_proposes_diffs_and_promotes_through_the_promoting_tool(self):
        with self.host() as host:
            s = AuthoringSession("word_list", 7, plugin=word_lists())
            self.assertEqual((s.version, s.body), ("v1", {"book": 7, "words": ["local", "a"]}))
            proposed = s.propose({"words": ["a", "b"]})
            self.assertEqual(proposed.normalized, {"book": 7, "words": ["a", "b"]})
            self.assertEqual([(c.op, c.item) for c in proposed.changes], [("added", "b")])
            out = s.promote(proposed)
        self.assertEqual(out.value, {"written": 2})
        self.assertEqual(host.requests[-1], ("books", "POST", "/books/7/words", b'["a","b"]'))

    def test_problems_propagate_and_a_subject_that_moved_refuses_the_proposal(self):
        with self.host() as host:
            s = AuthoringSession("word_list", 7, plugin=word_lists())
            with self.assertRaises(Problems):
                s.propose({"words": [" "]})
            host.routes["GET /books/7"] = ["a", "z"]
            with self.assertRaisesRegex(Failed, "SUBJECT_CHANGED"):
                s.propose({"words": ["b"]})

    def test_current_may_only_read_and_validate_and_diff_reach_no_backend(self):
        p = Plugin()
        p.entities("book")(lambda ctx, kind: [])
        p.tool(permission="w:w", description="d")(_answers_a_dict)

        @p.author("writer", subject_kind="book", promoted_by="_answers_a_dict", description="d")
        class Writer(_Empty):
            def current(self, ctx, subject):
                backend.post("books", "/books", {}).ok()

        @p.author("reader", subject_kind="book", promoted_by="_answers_a_dict", description="d")
        class Reader(_Empty):
            def validate(self, ctx, current, proposal):
                return backend.get("books", "/books").ok().json()

        with self.host():
            with self.assertRaisesRegex(Failed, "refused"):
                AuthoringSession("writer", 7, plugin=p)
            # A backend failure in validate is, like any ToolError there, a problem.
            with self.assertRaises(Problems) as e:
                AuthoringSession("reader", 7, plugin=p).propose({})
        self.assertRegex(e.exception.problems[0].message, 'backend "books" is not declared')
        with self.assertRaisesRegex(ValueError, "authors no kind 'poem'"):
            AuthoringSession("poem", 7, plugin=p)


def _answers_a_dict() -> dict:
    return {}


if __name__ == "__main__":
    unittest.main()
