/* Loads the demo's scripts in order; ?jquery=3 picks jQuery 3.7.1, anything else jQuery 4.0.0. */
(function () {
  'use strict';
  var wanted = /[?&]jquery=3\b/.test(window.location.search) ? '3.7.1' : '4.0.0';
  ['vendor/jquery-' + wanted + '.min.js', 'jquery.laharsub.js', 'chat.js'].forEach(function (src) {
    var script = document.createElement('script');
    script.src = src;
    script.async = false; // dynamically added scripts otherwise run in whatever order they arrive
    document.body.appendChild(script);
  });
}());
