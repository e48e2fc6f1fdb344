//! Components the views and the services that show dialogs of their own
//! (an agent signing in) both use: the modal dialog ([`modal`]) and where
//! focus goes back when a dialog closes ([`focus`]).

pub mod focus;
pub mod modal;
