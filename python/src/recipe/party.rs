//! kazoo's `Party` and `ShallowParty` over the core's `Party`: membership
//! and its faults are the core's; this translates arguments and the
//! blocking style.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! class Party:
//!     """kazoo's Party: members are <uuid4 hex>__party__ nodes holding their identifiers."""
//!
//!     def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
//!     def join(self) -> None:
//!         """Joins; a member whose session expires joins again on the next one until it leaves."""
//!     def leave(self) -> bool:
//!         """Leaves; True if this member's node was there."""
//!     def __iter__(self) -> Iterator[str]:
//!         """The members' identifiers."""
//!     def __len__(self) -> int: ...
//!     @property
//!     def participating(self) -> bool: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def data(self) -> bytes: ...
//!     @property
//!     def node(self) -> Optional[str]: ...
//!     @property
//!     def create_path(self) -> Optional[str]: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//!
//! @final
//! class ShallowParty(Party):
//!     """kazoo's ShallowParty: the identifier is in the node's name, <uuid4 hex>-<identifier>."""
//!
//!     def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
//! ```

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::PyClassInitializer;

use crate::holder;
use crate::recipe::{call, OnClient};

/// kazoo's ``Party(client, path, identifier=None)``: ``join()``,
/// ``leave()``, ``len(party)`` and ``list(party)`` (the members'
/// identifiers); each member is an ephemeral ``<uuid4 hex>__party__`` node
/// holding its identifier. Unlike kazoo's, a member whose session expired
/// joins again on the next session until it leaves. ``ShallowParty``
/// names its node ``<uuid4 hex>-<identifier>`` instead (no ``/`` in the
/// identifier).
#[pyclass(frozen, subclass, module = "zoolock")]
pub struct Party {
    path: String,
    identifier: String,
    core: OnClient<zoolock::Party>,
}

impl Party {
    fn make(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        shallow: bool,
    ) -> PyResult<Self> {
        let path = holder::path(path)?;
        let identifier = holder::identifier(identifier)?;
        let (party_path, id) = (path.clone(), identifier.clone());
        let core = OnClient::new(client, move |session| {
            if shallow {
                zoolock::Party::shallow(session, &party_path, &id)
            } else {
                zoolock::Party::new(session, &party_path, &id)
            }
        })?;
        Ok(Party { path, identifier, core })
    }
}

#[pymethods]
impl Party {
    #[new]
    #[pyo3(signature = (client, path, identifier=None))]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Party::make(client, path, identifier, false)
    }

    /// Joins the party (its node is made; an existing one of ours is kept).
    fn join(&self, py: Python<'_>) -> PyResult<()> {
        let party = self.core.get(py)?;
        call(py, async move { party.join().await })
    }

    /// Leaves: ``True`` if this member's node was there.
    fn leave(&self, py: Python<'_>) -> PyResult<bool> {
        let party = self.core.get(py)?;
        call(py, async move { party.leave().await })
    }

    /// The members' identifiers.
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let party = self.core.get(py)?;
        let members = call(py, async move { party.members().await })?;
        Ok(members.into_pyobject(py)?.try_iter()?.into_any().unbind())
    }

    /// How many members there are.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let party = self.core.get(py)?;
        call(py, async move { party.len().await })
    }

    /// Whether this member joined and has not left.
    #[getter]
    fn participating(&self) -> bool {
        self.core.last().is_some_and(|p| p.participating())
    }

    /// The recipe's path.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// This member's identifier as UTF-8 (kazoo's ``data``).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.identifier.as_bytes())
    }

    /// This member's node name under ``path`` (``None`` before the client started).
    #[getter]
    fn node(&self) -> Option<String> {
        self.core.last().map(|p| p.node().to_owned())
    }

    /// This member's node (``None`` before the client started).
    #[getter]
    fn create_path(&self) -> Option<String> {
        self.core.last().map(|p| p.create_path())
    }

    /// The client it was made with.
    #[getter]
    fn client(&self, py: Python<'_>) -> Py<PyAny> {
        self.core.client(py).into_any()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let name = slf.get_type().name()?;
        Ok(format!("<zoolock.{name} path={:?} identifier={:?}>", slf.get().path, slf.get().identifier))
    }
}

/// kazoo's ``ShallowParty(client, path, identifier=None)``: a ``Party``
/// whose members' identifiers are in their node names, listed in one request.
#[pyclass(frozen, extends = Party, module = "zoolock")]
pub struct ShallowParty;

#[pymethods]
impl ShallowParty {
    #[new]
    #[pyo3(signature = (client, path, identifier=None))]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<ShallowParty>> {
        Ok(PyClassInitializer::from(Party::make(client, path, identifier, true)?).add_subclass(ShallowParty))
    }
}
