// GENERATED from docs/legacy-schema.graphql by the command below; do not edit by hand.
// `LegacySchemaTests` fails when this copy and the file differ. Regenerate at the package root with:
//   python3 -c 'import sys; s=open("docs/legacy-schema.graphql").read(); t=open(sys.argv[1]).read(); i=t.index("#\"\"\"\n")+5; j=t.rindex("\n\"\"\"#"); open(sys.argv[1],"w").write(t[:i]+s+t[j:])' Sources/LocalBackend/GraphQL/LegacySchemaSDL.swift

/// The legacy Vortex GraphQL schema served on `/graphql`, exactly as `docs/legacy-schema.graphql` writes it.
enum LegacySchemaSDL {
    /// The SDL text, byte for byte the file's.
    static let text = #"""
# The legacy Vortex GraphQL subscription schema (graphql-transport-ws), as the documents describe it.
# The local backend executes exactly this with GraphQLSwift; the notifier's GraphQL plan selects every field.
#
# Permission filtering is server-side, as in the legacy backend: a subscriber receives a device or archive event only
# if its user (the JWT `sub` from connection_init's Authorization) may access the event's device group, and
# organization events only for its own organization. Role and revocation events go to that user only.

"Arbitrary JSON (the AI control options are not documented further)."
scalar JSON

type Query {
  "Liveness; the schema needs a query type."
  health: String!
}

type Subscription {
  "Device presence, recording and firmware changes, merged into one output (eventType tells which)."
  subscribeDeviceState(orgId: String!): DeviceStateOutput
  subscribeArchiveState(orgId: String!): ArchiveStateOutput
  "Licence phase, plan and AI settings changes, merged into one output (eventType tells which)."
  subscribeOrganizationState(orgId: String!): OrganizationStateOutput
  subscribeRoleChange(userId: String!): RoleChangeOutput
  subscribeUserTokenRevoke(userId: String!): UserTokenRevokeOutput
}

type DeviceStateOutput {
  mac: String
  derivant: String
  online: Boolean
  recording: Boolean
  "-1 to 14"
  fwUpdateState: Int
  thingName: String
  deviceGroupID: String
  orgId: String
  siteId: String
  eventType: String
  timestamp: String
}

type ArchiveStateOutput {
  mac: String
  derivant: String
  thingName: String
  deviceGroupID: String
  orgId: String
  siteId: String
  "Pending, Processing, Ready or Failed (our list; kept a String so unknown values pass)"
  status: String
  videoLength: Float
  videoSize: Int
  cloudSize: Int
  hasH265: Boolean
  createdAt: String
  eventType: String
  timestamp: String
}

type AIControlSetting {
  uuid: String
  termsAgreement: Boolean
  options: JSON
}

type OrganizationStateOutput {
  orgId: String
  "SetupStatus, Valid, NoticePeriod, GracePeriod, RenewalOverdue or Invalid (a String so unknown values pass)"
  licensePhase: String
  isFreePlan: Boolean
  AIControlSetting: AIControlSetting
  eventType: String
  timestamp: String
}

type RoleChangeOutput {
  reason: String
  eventType: String
  timestamp: String
}

type UserTokenRevokeOutput {
  userId: String!
  revokedAt: String!
  "PASSWORD_CHANGED"
  reason: String
  requestId: String
  eventType: String
  timestamp: String
}

"""#
}
