/**
 * The subset of Monday's public GraphQL schema the simulator serves. Type, field and argument
 * names, argument types and defaults are copied from the published schema
 * (github.com/mondaycom/monday-graphql-api, packages/agent-toolkit/lib/monday-graphql/schema.graphql),
 * so a query that validates here validates against api.monday.com/v2 and the other way round for
 * everything listed. Fields the simulator has no data for are left out rather than faked, so a
 * query using them fails validation loudly instead of passing with nulls.
 */
export const MONDAY_SDL = /* GraphQL */ `
"A JSON formatted string."
scalar JSON
"A date."
scalar Date
"An ISO 8601-encoded datetime (e.g., 2024-04-09T13:45:30Z)"
scalar ISO8601DateTime
scalar CompareValue

enum State { active all archived deleted }
enum BoardKind { private public share }
enum BoardObjectType { board custom_object document sub_items_board }
enum BoardsOrderBy { created_at used_at }
enum WorkspaceKind { closed open }
enum WorkspacesOrderBy { created_at }
enum UserKind { all guests non_guests non_pending }
enum Kind { person team }
enum NumberValueUnitDirection { left right }
enum PositionRelative { after_at before_at }
enum ItemsQueryOperator { and or }
enum ItemsOrderByDirection { asc desc }
enum ItemsQueryRuleOperator {
  any_of between contains_terms contains_text ends_with greater_than greater_than_or_equals
  is_empty is_not_empty lower_than lower_than_or_equal not_any_of not_contains_text starts_with
  within_the_last within_the_next
}
enum ColumnType {
  auto_number board_relation button checkbox color_picker country creation_log date dependency
  direct_doc doc dropdown email file formula group hour integration item_assignees item_id
  last_updated link location long_text mirror name numbers people person phone progress rating
  status subtasks tags team text time_tracking timeline unsupported vote week world_clock
}
enum VersionKind {
  current deprecated dev maintenance old__maintenance old_previous_maintenance previous_maintenance release_candidate
}

"Complexity data."
type Complexity {
  after: Int!
  before: Int!
  query: Int!
  reset_in_x_seconds: Int!
}

type Version {
  display_name: String!
  kind: VersionKind!
  value: String!
}

type Account {
  id: ID!
  name: String!
  slug: String!
  country_code: String
  tier: String
}

type Tag {
  color: String!
  id: ID!
  name: String!
}

type OutOfOffice {
  active: Boolean
  disable_notifications: Boolean
  end_date: Date
  start_date: Date
  type: String
}

type User {
  id: ID!
  account: Account!
  birthday: Date
  country_code: String
  created_at: Date
  current_language: String
  email: String!
  enabled: Boolean!
  is_admin: Boolean
  is_guest: Boolean
  is_pending: Boolean
  is_verified: Boolean
  is_view_only: Boolean
  join_date: Date
  last_activity: Date
  location: String
  mobile_phone: String
  name: String!
  out_of_office: OutOfOffice
  phone: String
  photo_original: String
  photo_small: String
  photo_thumb: String
  photo_thumb_small: String
  photo_tiny: String
  teams(ids: [ID!]): [Team]
  time_zone_identifier: String
  title: String
  url: String!
  utc_hours_diff: Int
}

type Team {
  id: ID!
  owners(ids: [ID!]): [User!]!
  picture_url: String
  users(emails: [String], ids: [ID!], kind: UserKind, limit: Int, name: String, newest_first: Boolean, non_active: Boolean, page: Int): [User]
  name: String!
  is_guest: Boolean
}

type WorkspaceIcon {
  color: String
  image: String
}

type WorkspaceSettings {
  icon: WorkspaceIcon
}

type Workspace {
  created_at: Date
  description: String
  id: ID
  is_default_workspace: Boolean
  kind: WorkspaceKind
  name: String!
  owners_subscribers(limit: Int = 25, page: Int = 1): [User]
  settings: WorkspaceSettings
  state: State
  team_owners_subscribers(limit: Int = 25, page: Int = 1): [Team!]
  teams_subscribers(limit: Int = 25, page: Int = 1): [Team]
  users_subscribers(limit: Int = 25, page: Int = 1): [User]
}

type Column {
  archived: Boolean!
  description: String
  id: ID!
  settings_str: String!
  title: String!
  type: ColumnType!
  width: Int
}

type Group {
  archived: Boolean
  color: String!
  deleted: Boolean
  id: ID!
  items_page(cursor: String, limit: Int! = 25, query_params: ItemsQuery): ItemsResponse!
  position: String!
  title: String!
}

input ItemsQuery {
  groups: [ItemsQueryGroup!]
  ids: [ID!]
  operator: ItemsQueryOperator = and
  order_by: [ItemsQueryOrderBy!]
  rules: [ItemsQueryRule!]
}

input ItemsQueryGroup {
  groups: [ItemsQueryGroup!]
  operator: ItemsQueryOperator = and
  rules: [ItemsQueryRule!]
}

input ItemsQueryOrderBy {
  column_id: String!
  direction: ItemsOrderByDirection = asc
}

input ItemsQueryRule {
  column_id: ID!
  compare_attribute: String
  compare_value: CompareValue!
  operator: ItemsQueryRuleOperator = any_of
}

type ItemsResponse {
  cursor: String
  items: [Item!]!
}

type Board {
  id: ID!
  updates(limit: Int = 25, page: Int = 1, ids: [ID!]): [Update!]
  board_folder_id: ID
  board_kind: BoardKind!
  columns(ids: [String], types: [ColumnType!]): [Column]
  columns_namespace: String
  creator: User!
  description: String
  groups(ids: [String]): [Group]
  item_terminology: String
  items_count: Int
  items_limit: Int
  items_page(cursor: String, limit: Int! = 25, query_params: ItemsQuery): ItemsResponse!
  name: String!
  owner: User! @deprecated(reason: "This field returned creator of the board. Please use 'creator' or 'owners' fields instead.")
  owners: [User]!
  permissions: String!
  state: State!
  subscribers: [User]!
  tags: [Tag]
  team_owners(limit: Int = 25, page: Int = 1): [Team!]
  team_subscribers(limit: Int = 25, page: Int = 1): [Team!]
  top_group: Group!
  type: BoardObjectType
  updated_at: ISO8601DateTime
  url: String!
  workspace: Workspace
  workspace_id: ID
}

interface ColumnValue {
  column: Column!
  id: ID!
  text: String
  type: ColumnType!
  value: JSON
}

type TextValue implements ColumnValue {
  column: Column!
  id: ID!
  text: String
  type: ColumnType!
  value: JSON
}

type LongTextValue implements ColumnValue {
  column: Column!
  id: ID!
  text: String
  type: ColumnType!
  updated_at: Date
  value: JSON
}

type StatusLabelStyle {
  border: String!
  color: String!
}

type StatusValue implements ColumnValue {
  column: Column!
  id: ID!
  index: Int
  is_done: Boolean
  label: String
  label_style: StatusLabelStyle
  text: String
  type: ColumnType!
  update_id: ID
  updated_at: Date
  value: JSON
}

type DateValue implements ColumnValue {
  column: Column!
  date: String
  icon: String
  id: ID!
  text: String
  time: String
  type: ColumnType!
  updated_at: Date
  value: JSON
}

type NumbersValue implements ColumnValue {
  column: Column!
  direction: NumberValueUnitDirection
  id: ID!
  number: Float
  symbol: String
  text: String
  type: ColumnType!
  value: JSON
}

type PeopleEntity {
  id: ID!
  kind: Kind
}

type PeopleValue implements ColumnValue {
  column: Column!
  id: ID!
  persons_and_teams: [PeopleEntity!]
  text: String
  type: ColumnType!
  updated_at: Date
  value: JSON
}

type CheckboxValue implements ColumnValue {
  checked: Boolean
  column: Column!
  id: ID!
  text: String
  type: ColumnType!
  updated_at: Date
  value: JSON
}

type Item {
  id: ID!
  updates(limit: Int = 25, page: Int = 1, ids: [ID!]): [Update!]
  board: Board
  column_values(ids: [String!], types: [ColumnType!]): [ColumnValue!]!
  created_at: Date
  creator: User
  creator_id: String!
  email: String!
  group: Group
  name: String!
  parent_item: Item
  relative_link: String
  state: State
  subitems: [Item]
  subscribers: [User]!
  updated_at: Date
  url: String!
}

type Like {
  id: ID!
  creator_id: String
  creator: User
  reaction_type: String
  created_at: Date
  updated_at: Date
}

type UpdatePin {
  item_id: ID!
}

type Watcher {
  user_id: ID!
  medium: String!
  user: User
}

type Asset {
  created_at: Date
  file_extension: String!
  file_size: Int!
  id: ID!
  name: String!
  original_geometry: String
  public_url: String!
  uploaded_by: User!
  url: String!
  url_thumbnail: String
}

type Reply {
  id: ID!
  body: String!
  kind: String!
  creator_id: String
  edited_at: Date!
  creator: User
  likes: [Like!]!
  pinned_to_top: [UpdatePin!]!
  viewers(limit: Int = 100, page: Int = 1): [Watcher!]!
  created_at: Date
  updated_at: Date
  text_body: String
}

type Update {
  id: ID!
  body: String!
  creator_id: String
  edited_at: Date!
  creator: User
  likes: [Like!]!
  pinned_to_top: [UpdatePin!]!
  viewers(limit: Int = 100, page: Int = 1): [Watcher!]!
  created_at: Date
  updated_at: Date
  item_id: String
  item: Item
  replies: [Reply!]
  assets: [Asset]
  text_body: String
}

type Query {
  updates(limit: Int = 25, page: Int = 1, ids: [ID!]): [Update!]
  account: Account
  boards(board_kind: BoardKind, ids: [ID!], latest: Boolean, limit: Int = 25, order_by: BoardsOrderBy, page: Int = 1, state: State = active, workspace_ids: [ID]): [Board]
  complexity: Complexity
  items(exclude_nonactive: Boolean, ids: [ID!], limit: Int = 25, newest_first: Boolean, page: Int = 1): [Item]
  me: User
  next_items_page(cursor: String!, limit: Int! = 25): ItemsResponse!
  tags(ids: [ID!]): [Tag]
  teams(ids: [ID!]): [Team]
  users(emails: [String], ids: [ID!], kind: UserKind, limit: Int, name: String, newest_first: Boolean, non_active: Boolean, page: Int): [User]
  workspaces(ids: [ID!], kind: WorkspaceKind, limit: Int = 25, order_by: WorkspacesOrderBy, page: Int = 1, state: State = active): [Workspace]
  version: Version!
  versions: [Version!]
}

type Mutation {
  complexity: Complexity
  create_item(board_id: ID!, column_values: JSON, create_labels_if_missing: Boolean, group_id: String, item_name: String!, position_relative_method: PositionRelative, relative_to: ID): Item
  change_multiple_column_values(board_id: ID!, column_values: JSON!, create_labels_if_missing: Boolean, item_id: ID): Item
  change_column_value(board_id: ID!, column_id: String!, create_labels_if_missing: Boolean, item_id: ID, value: JSON!): Item
  change_simple_column_value(board_id: ID!, column_id: String!, create_labels_if_missing: Boolean, item_id: ID, value: String): Item
  archive_item(item_id: ID): Item
  delete_item(item_id: ID): Item
  create_update(body: String!, item_id: ID, parent_id: ID): Update
  edit_update(id: ID!, body: String!): Update!
  delete_update(id: ID!): Update
  create_or_get_tag(board_id: ID, tag_name: String): Tag
}
`;
