// Merged by `jco componentize --bundle-config` into the Rolldown bundle of
// each plugin: the `toolhost:plugin/*` modules are the component's WIT
// imports, bound by componentize, never files to bundle.
export default {
  external: [/^toolhost:plugin\//],
};
