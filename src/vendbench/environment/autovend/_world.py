"""The frozen world: catalog, machines and hidden demand parameters, from ``world_seed``.

Everything here is generated deterministically from one integer, so every user of a
given ``world_seed`` gets the identical world. Nothing in this module is mutable after
construction; the per-trial state lives in ``_state``.

A private world mixes a secret salt into the generation (``salt_key``), so that it
cannot be computed from the public code and a world seed. The salt itself is never kept:
the world holds the SHA-256 of the salt (what a results file may store, to tell salted
worlds apart), and is generated from a different hash of it, so that the stored one
gives nothing away.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._registry import DEFAULT_WORLD_SEED

_SALT_DOMAIN = b"vendbench world salt\0"
MACHINE_CAPACITY = 200
MAX_LISTINGS = 40

# name, beverage?, SKU count, reference price range (CNY), shelf life (days),
# heat sensitivity (attraction lift per +10 °C above 22 °C; cold drinks > 0).
SUBCATEGORIES: tuple[tuple[str, bool, int, tuple[float, float], int, float], ...] = (
    ("water", True, 40, (2.0, 4.0), 90, 0.45),
    ("soda", True, 95, (3.0, 6.0), 90, 0.40),
    ("tea", True, 110, (3.5, 7.0), 90, 0.35),
    ("coffee", True, 85, (5.0, 12.0), 90, -0.10),
    ("juice", True, 90, (4.0, 8.0), 90, 0.30),
    ("energy/sports", True, 60, (5.0, 9.0), 90, 0.35),
    ("dairy/yogurt", True, 80, (4.0, 9.0), 30, 0.05),
    ("plant-protein", True, 40, (4.0, 8.0), 90, 0.0),
    ("chips", False, 110, (4.0, 10.0), 90, -0.10),
    ("biscuits", False, 120, (3.5, 9.0), 90, -0.10),
    ("chocolate", False, 75, (5.0, 15.0), 90, -0.30),
    ("candy/gum", False, 85, (3.0, 8.0), 90, -0.05),
    ("nuts/dried fruit", False, 70, (6.0, 15.0), 90, -0.10),
    ("instant noodles", False, 60, (5.0, 10.0), 90, -0.30),
    ("bread/cakes", False, 80, (4.0, 9.0), 30, -0.05),
    ("meat snacks", False, 65, (6.0, 15.0), 90, -0.10),
    ("seaweed/konjac", False, 50, (3.0, 8.0), 90, 0.0),
    ("jelly/desserts", False, 57, (3.0, 8.0), 90, 0.15),
)
SUBCATEGORY_NAMES = tuple(s[0] for s in SUBCATEGORIES)

# name, machines, attempts/day, price elasticity, no-purchase weight,
# preference per subcategory (same order as SUBCATEGORIES)
SITE_TYPES: tuple[tuple[str, int, float, float, float, tuple[float, ...]], ...] = (
    ("workplace", 6, 142.0, 2.8, 110.0,
     (1.3, 1.0, 1.1, 1.2, 0.7, 1.6, 0.7, 0.6, 0.9, 0.9, 0.6, 0.6, 0.5, 1.6, 1.0, 1.2, 0.6, 0.5)),
    ("campus", 2, 165.0, 3.5, 100.0,
     (1.1, 1.5, 1.2, 1.0, 1.0, 1.2, 1.1, 0.8, 1.3, 1.0, 1.0, 1.0, 0.6, 1.4, 1.1, 0.9, 1.1, 1.2)),
    ("residential", 4, 110.0, 3.0, 115.0,
     (1.2, 1.0, 0.9, 0.6, 1.1, 0.6, 1.5, 1.1, 1.0, 1.1, 1.0, 1.0, 1.0, 0.8, 1.3, 0.8, 0.9, 1.2)),
    ("commercial", 6, 154.0, 2.4, 120.0,
     (1.4, 1.3, 1.3, 1.0, 1.2, 1.0, 0.9, 0.8, 1.0, 0.8, 1.2, 1.1, 0.8, 0.5, 0.8, 0.9, 0.9, 1.0)),
    ("office", 2, 130.0, 2.6, 110.0,
     (1.1, 0.8, 1.3, 1.8, 1.0, 0.9, 1.1, 1.0, 0.8, 1.1, 1.2, 0.9, 1.3, 0.6, 1.2, 0.8, 1.2, 0.9)),
)
SITE_NAMES = tuple(s[0] for s in SITE_TYPES)

_PLACES = {
    "workplace": ["Jinqiao Plant", "Waigaoqiao Depot", "Songjiang Works", "Minhang Assembly",
                  "Baoshan Steel Gate", "Jiading Auto Park"],
    "campus": ["Fudan Library", "Tongji Dormitory"],
    "residential": ["Gubei Garden", "Kangjian Estate", "Hongkou Lane", "Yangpu Court"],
    "commercial": ["Nanjing Road Mall", "Xujiahui Plaza", "Wujiaochang Centre", "Hongqiao Station",
                   "Jing'an Metro", "Lujiazui Arcade"],
    "office": ["Zhangjiang Tower", "Hongqiao Office Park"],
}
_BRANDS = ["Nongfu", "Master Kong", "Uni-President", "Wahaha", "C'estbon", "Yili", "Mengniu",
           "Oishi", "Want Want", "Three Squirrels", "BeStore", "Liangpin", "Dali", "Ganyuan",
           "Huiyuan", "Genki Forest", "Dongpeng", "Bestcore", "Wei Long", "Haoliyou"]
_VARIANTS = ["Classic", "Lite", "Original", "Spicy", "Honey", "Lemon", "Peach", "Grape",
             "Matcha", "Sea Salt", "Mango", "Vanilla", "Barbecue", "Sesame", "Jasmine", "Oolong",
             "Strawberry", "Coconut", "Black", "Mint"]


@dataclass(frozen=True, slots=True)
class Product:
    id: str
    name: str
    subcategory: str
    beverage: bool
    unit_cost: int          # fen
    ref_price: int          # fen
    shelf_life: int         # days


@dataclass(frozen=True, slots=True)
class Machine:
    id: str
    name: str
    site_type: str


@dataclass(frozen=True, slots=True)
class World:
    """The frozen world. Public fields are what an agent may learn; ``hidden`` is not."""

    world_seed: int
    products: tuple[Product, ...]
    machines: tuple[Machine, ...]
    hidden: HiddenDemand
    salt_sha256: str | None = None        # None: the public world of ``world_seed``

    def product_index(self) -> dict[str, int]:
        return {p.id: i for i, p in enumerate(self.products)}


@dataclass(frozen=True, slots=True, eq=False)
class HiddenDemand:
    """The demand parameters no agent tool ever reveals (arrays indexed [machine, product])."""

    popularity: np.ndarray      # (K,) heavy-tailed, mean 1
    attraction: np.ndarray      # (M, K) b(m, k) = popularity × site/machine preference
    volume: np.ndarray          # (M,) λ_m, purchase attempts per day
    no_purchase: np.ndarray     # (M,) w_0
    elasticity: np.ndarray      # (M,) ε of the machine's site type
    heat: np.ndarray            # (K,) weather sensitivity of the product's subcategory
    subcategory: np.ndarray     # (K,) subcategory index
    site: np.ndarray            # (M,) site type index


def _catalog(rng: np.random.Generator) -> tuple[Product, ...]:
    products: list[Product] = []
    for sub_index, (name, beverage, count, (lo, hi), life, _heat) in enumerate(SUBCATEGORIES):
        label = name.split("/")[0].title()
        for j in range(count):
            ref = round(float(rng.uniform(lo, hi)) * 2) / 2          # to the half yuan
            margin = float(rng.uniform(0.42, 0.62))                  # cost share of the price
            cost = max(50, int(round(ref * margin * 100)))
            brand = _BRANDS[int(rng.integers(len(_BRANDS)))]
            variant = _VARIANTS[(j * 7 + sub_index) % len(_VARIANTS)]
            sizes, unit = ((250, 330, 450, 500, 550), "ml") if beverage else \
                ((30, 45, 60, 80, 100, 120), "g")
            size = f"{sizes[int(rng.integers(len(sizes)))]}{unit}"   # = rng.choice(sizes)
            products.append(Product(
                id=f"P{len(products) + 1:04d}",
                name=f"{brand} {variant} {label} {size}",
                subcategory=name,
                beverage=beverage,
                unit_cost=cost,
                ref_price=int(ref * 100),
                shelf_life=life,
            ))
    return tuple(products)


def _machines() -> tuple[Machine, ...]:
    machines: list[Machine] = []
    for site, count, *_ in SITE_TYPES:
        for place in _PLACES[site][:count]:
            machines.append(Machine(id=f"M{len(machines) + 1:02d}", name=place, site_type=site))
    return tuple(machines)


def salt_sha256(salt: str) -> str:
    """The SHA-256 of a world salt: what may be stored and shown."""
    return hashlib.sha256(salt.encode()).hexdigest()


def salt_key(salt: str) -> tuple[int, ...]:
    """The entropy a salt mixes into world generation (a domain-separated hash, so that
    ``salt_sha256`` does not reveal it)."""
    digest = hashlib.sha256(_SALT_DOMAIN + salt.encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "big") for i in range(0, 32, 4))


def build_world(world_seed: int = DEFAULT_WORLD_SEED, salt: str | None = None) -> World:
    """Generate the frozen world for ``world_seed``, private if ``salt`` is given."""
    if not salt:
        return _build(world_seed, (), None)
    return _build(world_seed, salt_key(salt), salt_sha256(salt))


@lru_cache(maxsize=8)
def _build(world_seed: int, key: tuple[int, ...], sha: str | None) -> World:
    """The world of ``world_seed`` and a salt's key (cached: worlds are immutable)."""
    rng = np.random.default_rng([world_seed, 0xC47A106, *key])
    products = _catalog(rng)
    machines = _machines()
    n_k, n_m = len(products), len(machines)
    subcat = np.array([SUBCATEGORY_NAMES.index(p.subcategory) for p in products])
    site = np.array([SITE_NAMES.index(m.site_type) for m in machines])

    popularity = rng.lognormal(0.0, 0.9, n_k)
    popularity /= popularity.mean()
    prefs = np.array([s[5] for s in SITE_TYPES])                       # (sites, subcats)
    machine_pref = prefs[site] * rng.lognormal(0.0, 0.20, (n_m, len(SUBCATEGORIES)))
    fit = rng.lognormal(0.0, 0.25, (n_m, n_k))                          # machine-product fit
    # within a subcategory, dearer products attract fewer buyers at their reference price
    ref = np.array([p.ref_price for p in products], dtype=float)
    sub_mean = np.array([ref[subcat == c].mean() for c in range(len(SUBCATEGORIES))])
    value = (ref / sub_mean[subcat]) ** -1.2
    attraction = (popularity * value)[None, :] * machine_pref[:, subcat] * fit

    scale = np.clip(rng.lognormal(0.0, 0.18, n_m), 0.7, 1.4)
    volume = np.array([SITE_TYPES[s][2] for s in site]) * scale
    hidden = HiddenDemand(
        popularity=popularity,
        attraction=attraction,
        volume=volume,
        no_purchase=np.array([SITE_TYPES[s][4] for s in site], dtype=float),
        elasticity=np.array([SITE_TYPES[s][3] for s in site], dtype=float),
        heat=np.array([SUBCATEGORIES[c][5] for c in subcat]),
        subcategory=subcat,
        site=site,
    )
    for arr in (popularity, attraction, volume):
        arr.setflags(write=False)
    return World(world_seed=world_seed, products=products, machines=machines, hidden=hidden,
                 salt_sha256=sha)
