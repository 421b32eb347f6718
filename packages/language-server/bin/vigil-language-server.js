#!/usr/bin/env node
// The installed `vigil-language-server` command. It lives outside dist/ so that the file exists
// (and is executable) when npm links it, before the first build has run.
await import("../dist/main.js");
