//! [`PeopleEffect`]: a change an admin makes to their tenant's people
//! (users, roles, service clients), written with its audit row.

/// A change to a tenant's people, applied in the transaction of the audit
/// row that records it: the row and the change are one. A change that
/// finds what it changes gone (a user, role or client removed meanwhile,
/// a client revoked already) fails the whole transaction as lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeopleEffect {
    /// User `user` of `tenant` disabled, or enabled again. Disabling also
    /// ends their browser sessions and revokes their token families at
    /// `at_s` (unix seconds): their tokens stop working at once.
    SetDisabled {
        /// The user's tenant.
        tenant: String,
        /// The user's id.
        user: String,
        /// Disabled (true) or enabled.
        disabled: bool,
        /// When, in unix seconds.
        at_s: i64,
    },
    /// Role `role` of `tenant` permits `permission` (`resource:action`),
    /// or no longer does. Permitting one held already, or forbidding one
    /// not held, changes nothing.
    Permission {
        /// The role's tenant.
        tenant: String,
        /// The role.
        role: String,
        /// The permission, as stored.
        permission: String,
        /// Permitted (true) or forbidden.
        permit: bool,
    },
    /// User `user` of `tenant` given role `role`, or taken from it.
    Membership {
        /// The role's (and the user's) tenant.
        tenant: String,
        /// The role.
        role: String,
        /// The user's id.
        user: String,
        /// Given (true) or taken.
        member: bool,
    },
    /// A new user `username` of `tenant`, with id `user` and a password
    /// already hashed (never the password itself). A username taken
    /// meanwhile fails the whole transaction as lost.
    AddUser {
        /// The user's tenant (which exists: it is the admin's own).
        tenant: String,
        /// The new user's id.
        user: String,
        /// Their username, unique on the host.
        username: String,
        /// Their password's hash (a PHC string).
        password_hash: String,
        /// When, in unix seconds.
        at_s: i64,
    },
    /// User `user` of `tenant` gets a new password (its hash); their
    /// browser sessions end, so the old password's sessions are gone.
    SetPassword {
        /// The user's tenant.
        tenant: String,
        /// The user's id.
        user: String,
        /// The new password's hash (a PHC string).
        password_hash: String,
    },
    /// Client `client_id` revoked at `at_s` (unix seconds): every token it
    /// holds stops working.
    RevokeClient {
        /// The client.
        client_id: String,
        /// When, in unix seconds.
        at_s: i64,
    },
}
