import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import {
  backend,
  change,
  defineAuthoring,
  defineEntities,
  definePlugin,
  defineTool,
  escapePointer,
  invalidArguments,
  pointer,
  Problems,
  s,
  type Authoring,
  type Infer,
} from "../src/index.ts";
import { authoringSession, currentOf, diffProposal, fakeHost, testCtx, validateProposal } from "../src/testing.ts";

/** A book's words, as `current` reads them. */
interface Words {
  book: number;
  words: string[];
}

const writeInput = s.object({ book: s.integer(), words: s.array(s.string()) });

const writeWords = defineTool({
  name: "write_words",
  description: "Writes a book's words.",
  permission: "words:write",
  input: writeInput,
  run: ({ book, words }) => {
    backend.post("books", `/books/${book}/words`, words).ok();
    return { written: words.length };
  },
});

const books = defineEntities({ kinds: ["book"], snapshot: () => [] });

/** `word_list`: a proposal is a list of words, none blank; promoting writes them. */
const wordLists = defineAuthoring<Words, Infer<typeof writeInput>>({
  name: "word_list",
  description: "A book's words: propose {words}, none blank.",
  subjectKind: "book",
  promotedBy: "write_words",
  current: (book, ctx) => {
    const words = backend.get("books", `/books/${book}`).ok().json<string[]>();
    return { version: `v${words.length}`, body: { book, words: [ctx.tenant, ...words] } };
  },
  validate: (current, proposal) => {
    const words = (proposal as { words?: unknown } | null)?.words;
    if (!Array.isArray(words)) throw new Problems([{ path: pointer("words"), message: "expected a list of words" }]);
    if (words[0] === "boom") throw invalidArguments("boom is not a word");
    const blank = words.flatMap((w, i) => (String(w).trim() === "" ? [{ path: pointer("words", i), message: "blank" }] : []));
    if (blank.length > 0) throw new Problems(blank);
    return { book: current.book, words };
  },
  diff: (current, normalized) => normalized.words.filter((w) => !current.words.includes(w)).map((w) => change.added(w, w)),
});

const plugin = definePlugin({ tools: [writeWords], entities: books, authoring: [wordLists] });
const bare = definePlugin({ tools: [writeWords] });
const CURRENT = { book: 7, words: ["a"] };

beforeEach(() => fakeHost.reset());

test("a plugin without kinds lists none and refuses every kind naming it", () => {
  assert.deepEqual(bare.authoring.kinds(), []);
  const message = 'this plugin authors no kind "test_plan" (it authors [])';
  assert.deepEqual(currentOf(bare, "test_plan", 1), { err: { tag: "invalid-arguments", val: message } });
  assert.deepEqual(validateProposal(bare, "test_plan", {}, {}), { problems: [{ path: "", message }] });
  assert.deepEqual(diffProposal(bare, "test_plan", {}, {}), { err: { tag: "invalid-arguments", val: message } });
});

test("a kind lists its subject kind and promoting tool", () => {
  assert.deepEqual(plugin.authoring.kinds(), [
    { name: "word_list", description: "A book's words: propose {words}, none blank.", subjectKind: "book", promotedBy: "write_words" },
  ]);
});

test("a kind the plugin cannot serve is refused where it is defined", () => {
  const kind = (over: Record<string, string>) => () =>
    defineAuthoring({ name: "k", description: "d", subjectKind: "book", promotedBy: "write_words", current: () => ({ version: "v", body: {} }), validate: () => ({}), diff: () => [], ...over });
  assert.throws(kind({ name: "Word List" }), /a name is 1-64 of \[a-z0-9_\]/);
  assert.throws(kind({ subjectKind: "" }), /a subject kind is/);
  assert.throws(kind({ promotedBy: "" }), /name the tool that promotes it/);
  const serve = (k: Authoring) => () => definePlugin({ tools: [writeWords], entities: books, authoring: [k] });
  assert.throws(serve(kind({ promotedBy: "nope" })()), /promoted by "nope", which is not one of the plugin's tools/);
  assert.throws(serve(kind({ subjectKind: "page" })()), /subject kind "page" is not an entity kind/);
  assert.throws(() => definePlugin({ tools: [writeWords], entities: books, authoring: [wordLists, wordLists] }), /two authoring kinds are named "word_list"/);
});

test("current serializes the body and keeps the version", () => {
  fakeHost.backend = () => ({ status: 200, body: ["a", "b"] });
  assert.deepEqual(plugin.authoring.current(testCtx(), "word_list", 7), { version: "v2", body: '{"book":7,"words":["demo","a","b"]}' });
});

test("validate answers the normalized arguments or every problem at its pointer", () => {
  const cases: Array<[unknown, unknown]> = [
    [{ words: ["b"] }, { ok: { book: 7, words: ["b"] } }],
    [{ words: ["b", " ", ""] }, ["/words/1", "/words/2"]],
    [{ words: 3 }, ["/words"]],
    [{ words: ["boom"] }, [""]],
  ];
  for (const [proposal, want] of cases) {
    const got = validateProposal(plugin, "word_list", CURRENT, proposal);
    assert.deepEqual("problems" in got ? got.problems.map((p) => p.path) : got, want, JSON.stringify(proposal));
  }
  assert.throws(() => plugin.authoring.validate(testCtx(), "word_list", "{}", "not json"), (e: Problems) => e.payload[0].path === "" && /the proposal does not parse/.test(e.payload[0].message));
});

test("a normalized proposal the promoting tool does not take is a plugin bug, logged", () => {
  const sloppy = defineAuthoring({
    name: "sloppy",
    description: "Forgets the book.",
    subjectKind: "book",
    promotedBy: "write_words",
    current: () => ({ version: "v", body: {} }),
    validate: () => ({ words: [] }),
    diff: () => [],
  });
  const p = definePlugin({ tools: [writeWords], entities: books, authoring: [sloppy] });
  assert.throws(() => validateProposal(p, "sloppy", {}, {}), /validate answered what "write_words" does not take: missing field "book"/);
  assert.match(fakeHost.logs[0][1], /authoring.validate: uncaught Error/);
});

test("diff gets the checked arguments and answers its changes with JSON sides", () => {
  assert.deepEqual(diffProposal(plugin, "word_list", CURRENT, { book: 7, words: ["a", "b"] }), { ok: [{ op: "added", item: "b", after: "b" }] });
  assert.deepEqual(plugin.authoring.diff(testCtx(), "word_list", JSON.stringify(CURRENT), '{"book":7,"words":["c"]}'), [
    { op: "added", item: "c", before: undefined, after: '"c"' },
  ]);
  const refused = diffProposal(plugin, "word_list", CURRENT, { book: 7 });
  assert.deepEqual(refused, { err: { tag: "invalid-arguments", val: 'the normalized proposal does not parse: missing field "words"' } });
});

test("change builders keep only JSON and pointers escape tilde before slash", () => {
  assert.deepEqual(change.changed("Cart", { tags: ["a"], gone: undefined }, { tags: [] }), { op: "changed", item: "Cart", before: { tags: ["a"] }, after: { tags: [] } });
  assert.deepEqual(change.removed("Cart", 1), { op: "removed", item: "Cart", before: 1 });
  assert.throws(() => change.added("Cart", undefined), /"Cart" after is not JSON/);
  assert.equal(escapePointer("a/b~c"), "a~1b~0c");
  assert.equal(pointer("tests", 3, "a/b"), "/tests/3/a~1b");
  assert.equal(pointer(), "");
  assert.throws(() => new Problems([]), /at least one problem/);
});

test("a session proposes, diffs and promotes through the promoting tool", () => {
  fakeHost.backend = (r) => (r.method === "get" ? { status: 200, body: ["a"] } : { status: 201, body: {} });
  const session = authoringSession(plugin, "word_list", 7);
  assert.deepEqual([session.version, session.body], ["v1", { book: 7, words: ["demo", "a"] }]);
  const proposed = session.propose({ words: ["a", "b"] });
  assert.ok("ok" in proposed, JSON.stringify(proposed));
  assert.deepEqual(proposed.ok.changes, [{ op: "added", item: "b", after: "b" }]);
  assert.deepEqual(session.promote(proposed.ok), { ok: { written: 2 }, text: undefined });
  const { backend: to, method, path, body } = fakeHost.requests.at(-1) ?? {};
  assert.deepEqual([to, method, path, body], ["books", "post", "/books/7/words", '["a","b"]']);
});

test("a session refuses a subject that moved, and grants current reads and validate nothing", () => {
  let words = ["a"];
  fakeHost.backend = () => ({ status: 200, body: words });
  const session = authoringSession(plugin, "word_list", 7);
  assert.deepEqual(session.propose({ words: [" "] }), { problems: [{ path: "/words/0", message: "blank" }] });
  words = ["a", "z"];
  const moved = session.propose({ words: ["b"] });
  assert.ok("err" in moved && moved.err.val.startsWith("SUBJECT_CHANGED"), JSON.stringify(moved));

  const spy = (name: string, current: () => { version: string; body: unknown }, validate: () => Record<string, unknown>) =>
    defineAuthoring({ name, description: "d", subjectKind: "book", promotedBy: "write_words", current, validate, diff: () => [] });
  const writer = spy("writer", () => ({ version: String(backend.post("books", "/books", {}).status), body: {} }), () => ({}));
  const reader = spy("reader", () => ({ version: "v", body: {} }), () => backend.get("books", "/books").ok().json());
  const p = definePlugin({ tools: [writeWords], entities: books, authoring: [writer, reader] });
  assert.throws(() => authoringSession(p, "writer", 7), /refused the request to backend books: POST while reading/);
  const problems = authoringSession(p, "reader", 7).propose({});
  assert.ok("problems" in problems && /books/.test(problems.problems[0].message), JSON.stringify(problems));
});
