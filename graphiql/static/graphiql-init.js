// Starts GraphiQL on hbgraph's page (package graphiql). It is served as a
// file rather than inlined so that the page's Content-Security-Policy can
// forbid inline scripts; the page passes its settings in data-* attributes
// of #graphiql. React, ReactDOM, GraphiQL and GraphiQLPluginExplorer are the
// globals of the vendored UMD builds, loaded before this file.
(function () {
  'use strict';
  var root = document.getElementById('graphiql');
  var cfg = root.dataset;

  // Radix's dialogs (settings, shortcuts) lock scrolling with a <style>
  // element made by react-style-singleton, which stamps it with this
  // global's value: the page's CSP lets that one nonce's styles in.
  window.__webpack_nonce__ = cfg.styleNonce;

  var plugins = [];
  if (window.GraphiQLPluginExplorer) {
    plugins.push(window.GraphiQLPluginExplorer.explorerPlugin());
  }

  // Subscriptions go over a WebSocket to the same endpoint, with the
  // graphql-ws client GraphiQL's build carries (graphql-transport-ws); the
  // headers editor's headers travel in connection_init's payload, where
  // hbgraph reads Authorization.
  var wsScheme = window.location.protocol === 'https:' ? 'wss://' : 'ws://';
  var post = GraphiQL.createFetcher({
    url: cfg.endpoint,
    subscriptionUrl: wsScheme + window.location.host + new URL(cfg.endpoint, window.location.href).pathname,
  });
  var props = {
    fetcher: function (params, opts) {
      return post(withDefinedOperation(params), opts);
    },
    plugins: plugins,
    defaultEditorToolsVisibility: 'variables',
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
    inputValueDeprecation: true,
  };
  // The first visit opens on the example query and its variables; later
  // ones on the tabs GraphiQL saved in localStorage (under "graphiql:").
  // Not with defaultTabs: GraphiQL 4.1.2 leaves the first tab's variables
  // out of the editor. And GraphiQL saves the editors' text only once they
  // are edited, but on the next visit looks for a saved tab with the saved
  // text and opens a second tab when none matches: so the example's
  // variables are saved here, as if typed.
  if (!storageHas('graphiql:tabState')) {
    props.query = cfg.defaultQuery;
    props.variables = cfg.defaultVariables;
    storageSet('graphiql:variables', cfg.defaultVariables);
  }

  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, props));

  // withDefinedOperation returns the request params with an operationName
  // the document defines. GraphiQL 4.1.2 works out the document's operations
  // 100 ms after the query editor last changed, and until then runs the new
  // text with the old text's operation name: replace a named example with an
  // anonymous query and run it at once (a paste, the run button, Ctrl-Enter)
  // and the server is asked for an operation the document does not have.
  // So: a name the document defines is kept; with one operation or none the
  // name is dropped (the server runs the only one); with several, the one
  // under the query editor's cursor runs, or else the first, which is what
  // GraphiQL picks once it has caught up. A document that does not parse
  // goes as it is, for the server to report the syntax error.
  function withDefinedOperation(params) {
    var ops;
    try {
      ops = GraphiQL.GraphQL.parse(params.query).definitions.filter(function (d) {
        return d.kind === 'OperationDefinition';
      });
    } catch (e) {
      return params;
    }
    var name = params.operationName;
    if (name && ops.some(function (op) { return op.name && op.name.value === name; })) {
      return params;
    }
    var out = Object.assign({}, params);
    delete out.operationName;
    if (ops.length > 1) {
      var op = operationAtCursor(ops) || ops[0];
      if (op.name) out.operationName = op.name.value;
    }
    return out;
  }

  // operationAtCursor returns the operation of ops under the cursor of the
  // query editor (CodeMirror 5, whose element keeps the instance), if any.
  function operationAtCursor(ops) {
    var el = root.querySelector('.graphiql-query-editor .CodeMirror');
    var cm = el && el.CodeMirror;
    if (!cm) return null;
    var at = cm.indexFromPos(cm.getCursor());
    for (var i = 0; i < ops.length; i++) {
      if (ops[i].loc && ops[i].loc.start <= at && at <= ops[i].loc.end) return ops[i];
    }
    return null;
  }

  // localStorage throws where storage is off; GraphiQL then keeps nothing.
  function storageHas(key) {
    try {
      return window.localStorage.getItem(key) !== null;
    } catch (e) {
      return false;
    }
  }
  function storageSet(key, value) {
    try {
      window.localStorage.setItem(key, value);
    } catch (e) {
      // nothing kept, nothing to match on the next visit
    }
  }
})();
