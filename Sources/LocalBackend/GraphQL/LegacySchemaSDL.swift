// GENERATED from docs/legacy-schema.graphql by the command below; do not edit by hand.
// `LegacySchemaTests` fails when this copy and the file differ. Regenerate at the package root with:
//   python3 -c 'import sys; s=open("docs/legacy-schema.graphql").read(); t=open(sys.argv[1]).read(); i=t.index("#\"\"\"\n")+5; j=t.rindex("\n\"\"\"#"); open(sys.argv[1],"w").write(t[:i]+s+t[j:])' Sources/LocalBackend/GraphQL/LegacySchemaSDL.swift

/// The legacy Vortex GraphQL schema served on `/graphql`, exactly as `docs/legacy-schema.graphql` writes it.
enum LegacySchemaSDL {
    /// The SDL text, byte for byte the file's.
    static let text = #"""
        # The legacy Vortex GraphQL subscription schema (graphql-transport-ws), as the documents describe it.
        # The local backend executes exactly this with GraphQLSwift.
        #
        # What the documents define, and what the notifier's default documents select (no arguments; the server scopes every
        # subscription by the connection's user):
        #   DeviceStateOutput        mac derivant online recording fwUpdateState thingName deviceGroupID   (seed 000)
        #   OrganizationStateOutput  licensePhase isFreePlan AIControlSetting { uuid termsAgreement options } (seed 001)
        #   ArchiveStateOutput       mac derivant thingName status videoLength videoSize cloudSize hasH265 createdAt (seed 001)
        #   RoleChangeOutput         reason                                                              (seed 001)
        #   UserTokenRevokeOutput    userId revokedAt reason requestId                                   (seed 001)
        # Fields marked "local extension" and the optional arguments are this local backend's additions (the drill identifies
        # events by their timestamp); a real legacy server need not have them, so nothing in the library selects them by
        # default. `vortex-realtime preflight` checks a server's schema against the documents an app uses.
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

        "Every subscription is scoped by the connection's user; the optional argument (a local extension) must then name that user or their organization."
        type Subscription {
          "Device presence, recording and firmware changes, merged into one output (eventType tells which)."
          subscribeDeviceState(orgId: String): DeviceStateOutput
          subscribeArchiveState(orgId: String): ArchiveStateOutput
          "Licence phase, plan and AI settings changes, merged into one output (eventType tells which)."
          subscribeOrganizationState(orgId: String): OrganizationStateOutput
          subscribeRoleChange(userId: String): RoleChangeOutput
          subscribeUserTokenRevoke(userId: String): UserTokenRevokeOutput
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
          "local extension"
          orgId: String
          "local extension"
          siteId: String
          "local extension"
          eventType: String
          "local extension"
          timestamp: String
        }

        type ArchiveStateOutput {
          mac: String
          derivant: String
          thingName: String
          deviceGroupID: String
          "local extension"
          orgId: String
          "local extension"
          siteId: String
          "Pending, Processing, Ready or Failed (our list; kept a String so unknown values pass)"
          status: String
          videoLength: Float
          videoSize: Int
          cloudSize: Int
          hasH265: Boolean
          createdAt: String
          "local extension"
          eventType: String
          "local extension"
          timestamp: String
        }

        type AIControlSetting {
          uuid: String
          termsAgreement: Boolean
          options: JSON
        }

        type OrganizationStateOutput {
          "local extension"
          orgId: String
          "SetupStatus, Valid, NoticePeriod, GracePeriod, RenewalOverdue or Invalid (a String so unknown values pass)"
          licensePhase: String
          isFreePlan: Boolean
          AIControlSetting: AIControlSetting
          "local extension"
          eventType: String
          "local extension"
          timestamp: String
        }

        type RoleChangeOutput {
          reason: String
          "local extension"
          eventType: String
          "local extension"
          timestamp: String
        }

        type UserTokenRevokeOutput {
          userId: String!
          revokedAt: String!
          "PASSWORD_CHANGED"
          reason: String
          requestId: String
          "local extension"
          eventType: String
          "local extension"
          timestamp: String
        }

        """#
}
