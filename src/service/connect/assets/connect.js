// Switchboard Connect UI. Plain JS, no build step, loaded as an external file (the page's CSP
// allows no inline script). It does three things:
//  1. On the first page, reads the session token from the URL fragment (never sent to a
//     server, so never logged), removes it from the address bar and history, and exchanges it
//     for an HttpOnly cookie; then loads the page again, now rendered for the session.
//  2. Moves focus to an error message, so keyboard and screen-reader users land on it.
//  3. After a connection, posts {type: 'switchboard:connected'} to window.opener (when opened
//     as a popup) and follows the redirect_url.
(function () {
  'use strict';
  var main = document.getElementById('main');
  var page = main ? main.getAttribute('data-page') : '';
  var hash = window.location.hash.replace(/^#/, '');
  var token = null;
  hash.split('&').forEach(function (part) {
    var kv = part.split('=');
    if (kv[0] === 'session' && kv[1]) token = decodeURIComponent(kv[1]);
  });

  function show(heading, detail) {
    var h = document.getElementById('heading');
    var s = document.getElementById('status');
    if (h) h.textContent = heading;
    if (s) {
      s.textContent = detail;
      s.className = 'alert';
      s.setAttribute('role', 'alert');
    }
  }

  if (token !== null) {
    history.replaceState(null, '', window.location.pathname + window.location.search);
    fetch('/connect/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token: token }),
    })
      .then(function (res) {
        if (res.ok) {
          window.location.replace('/connect');
          return undefined;
        }
        return res.json().then(function (p) {
          var d = (p && p.details) || {};
          show(d.heading || 'This link cannot be used', d.message || p.detail || 'Go back to the app that sent you here and start again.');
        });
      })
      .catch(function () {
        show('Could not reach the server', 'Check your connection and reload the page.');
      });
    return;
  }
  if (page === 'bootstrap') {
    show('This link is not valid', 'The connection link is incomplete. Open the full link from the app that sent you here.');
    return;
  }

  var error = document.getElementById('error');
  if (error) error.focus();

  var result = document.getElementById('result');
  if (result) {
    var heading = document.getElementById('done-heading');
    if (heading) heading.focus();
    var message = {
      type: 'switchboard:connected',
      connector_id: result.getAttribute('data-connector-id'),
      connector_type: result.getAttribute('data-connector-type'),
    };
    if (window.opener && window.opener !== window) {
      try {
        window.opener.postMessage(message, result.getAttribute('data-message-origin') || '*');
      } catch (_e) {
        // The opener navigated elsewhere (another origin): nothing to tell.
      }
    }
    var redirect = result.getAttribute('data-redirect');
    if (redirect) window.location.assign(redirect);
  }
})();
