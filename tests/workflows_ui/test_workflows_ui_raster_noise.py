"""Two views of the same state are the same up to Chromium's rasterising noise and no further: a few pixels a
level or two off (an anti-aliased corner painted on a loaded machine) pass; anything a page could show (a letter,
a shape, a tint over the whole page) does not, nor does any other field of the observation."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image, ImageDraw

from salesgym.envs.workflows_ui import conformance as hooks
from salesgym.envs.workflows_ui.observe import RASTER_NOISE_LEVELS, RASTER_NOISE_PIXELS, same_screen, same_view
from salesgym.testing.conformance import alike


def _page() -> Image.Image:
    page = Image.new("RGB", (320, 200), (245, 247, 250))
    draw = ImageDraw.Draw(page)
    draw.rounded_rectangle((10, 10, 300, 120), radius=8, fill=(255, 255, 255), outline=(213, 220, 229))
    draw.text((20, 30), "Summary", fill=(60, 60, 70))
    return page


def _png(page: Image.Image) -> str:
    out = io.BytesIO()
    page.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _nudged(points: int, by: int, channel: int = 2) -> Image.Image:
    page = _page()
    for i in range(points):
        xy = (20 + i % 250, 150 + i // 250)
        pixel = list(page.getpixel(xy))
        pixel[channel] = max(0, pixel[channel] - by)
        page.putpixel(xy, tuple(pixel))
    return page


def _obs(png: str, **data: Any) -> dict[str, Any]:
    return {"text": "URL: http://crm.salesgym.test/", "data": {"axtree": "[12] textbox 'Summary'", "screenshot": png,
                                                             **data}}


def test_the_noise_seen_in_ci_passes_and_the_limits_hold_exactly() -> None:
    base = _png(_page())
    assert same_screen(base, base)
    assert same_screen(base, _png(_nudged(11, 1)))  # what CI saw: eleven pixels of a corner, one level
    assert same_screen(base, _png(_nudged(RASTER_NOISE_PIXELS, RASTER_NOISE_LEVELS)))
    assert not same_screen(base, _png(_nudged(RASTER_NOISE_PIXELS + 1, 1)))
    assert not same_screen(base, _png(_nudged(1, RASTER_NOISE_LEVELS + 1)))
    assert not same_screen(base, _png(_nudged(1, RASTER_NOISE_LEVELS + 1, channel=0)))


def test_anything_a_page_could_show_differs() -> None:
    base = _png(_page())
    other_word = _page()
    ImageDraw.Draw(other_word).text((20, 60), "$48,000", fill=(60, 60, 70))
    tinted = Image.eval(_page(), lambda v: max(0, v - 1))  # a one-level tint over the whole page
    for changed in (other_word, tinted, _page().resize((320, 201))):
        assert not same_screen(base, _png(changed))


def test_views_compare_every_other_field_exactly() -> None:
    base, noisy = _png(_page()), _png(_nudged(11, 1))
    assert same_view(_obs(base), _obs(noisy))
    assert not same_view(_obs(base), _obs(noisy, url="http://crm.salesgym.test/deals"))
    assert not same_view(_obs(base), {**_obs(noisy), "text": "URL: http://crm.salesgym.test/deals"})
    assert not same_view(_obs(base), {"text": "x", "data": {"axtree": "[12] textbox 'Summary'"}})


def test_the_kit_compares_steps_and_episodes_through_the_familys_hook() -> None:
    base, noisy = _obs(_png(_page())), _obs(_png(_nudged(11, 1)))
    step_a, step_b = (base, 0.0, False, False, {"n": 1}), (noisy, 0.0, False, False, {"n": 1})
    assert alike(hooks, step_a, step_b) and alike(hooks, [base, base], [noisy, noisy])
    assert not alike(None, step_a, step_b)  # a family without the hook compares exactly
    assert not alike(hooks, step_a, (noisy, 1.0, False, False, {"n": 1}))
    assert not alike(hooks, step_a, (noisy, 0.0, False, False, {"n": 2}))
    assert not alike(hooks, [base, base], [noisy])
