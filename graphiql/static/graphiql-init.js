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

  var props = {
    fetcher: GraphiQL.createFetcher({ url: cfg.endpoint }),
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
