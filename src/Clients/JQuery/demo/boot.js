/* Loads jQuery (?jquery=3 picks 3.7.1, anything else 4.0.0), which draws the page, then the chat, an ES
   module on the laharsub module (laharsub.js, served next to it). */
(function () {
  'use strict';
  var wanted = /[?&]jquery=3\b/.test(window.location.search) ? '3.7.1' : '4.0.0';
  var jquery = document.createElement('script');
  jquery.src = 'vendor/jquery-' + wanted + '.min.js';
  jquery.onload = function () {
    var chat = document.createElement('script');
    chat.type = 'module';
    chat.src = 'chat.js';
    document.body.appendChild(chat);
  };
  document.body.appendChild(jquery);
}());
